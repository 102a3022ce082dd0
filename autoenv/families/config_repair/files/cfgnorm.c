/* cfgnorm 1.4: the config reader of the services' 2004 launcher, as config-repair level 5 ships it (compiled,
 * stripped, no source).
 *
 * `cfgnorm CONFIG` reads an INI-style file and prints the effective configuration the launcher would load, one
 * `section.key=value` line per setting in load order, after the errors it met and before a summary line; its exit
 * status is the number of errors (as the shell sees an int returned from main: modulo 256). Its behaviour is the
 * task's specification, quirks included: the solver finds it by running the binary. What a 2004 C program does
 * that a careful replacement must do too (the hidden configs are made of these):
 *   - a line is read with fgets into LINE_MAX_ bytes: a longer line is cut, and its rest read as a line of its
 *     own (and counted as one: the error line numbers shift);
 *   - a NUL byte ends the line as C sees it; one trailing '\r' is dropped (after the '\n');
 *   - blanks are spaces and tabs; a comment is a line whose first non-blank byte is '#' or ';' (a '#' after a
 *     value is part of the value);
 *   - `[name]` starts a section: the name is the bytes between '[' and the first ']' (not trimmed, case kept);
 *     a header without ']' is an error and leaves the section as it was; settings before any header belong to
 *     the section "" (as does `[]`); a repeated header continues its section;
 *   - a setting is `key = value` at the first '=': a line with none is an error, as is an empty key; the key is
 *     trimmed of blanks and folded to ASCII lower case; the value loses its leading blanks and its trailing
 *     spaces, but not its trailing tabs;
 *   - section names and keys keep their first NAME_LEN - 1 bytes (two long keys can become one; UTF-8 be cut);
 *   - a key set again keeps its first place and takes its last value;
 *   - a section holds at most MAX_KEYS keys and the table MAX_ENTRIES: a new key beyond either is an error;
 *   - a value in double quotes is printed without them, as it is; a value of digits (with one sign) is read
 *     with strtol (64-bit, saturating) and printed as the int it is cast to (32 bits, wrapping); yes/on/true
 *     and no/off/false in any ASCII case print as true and false; any other value is printed as it is.
 *
 * Compile-time parameters (autoenv.families.config_repair.legacy draws them per task): LINE_MAX_, NAME_LEN,
 * MAX_KEYS; NO_LICENCE for the host's build.
 * The licence file lets the tests remove the tool (and any copy of it) from the machine that grades a replacement.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef LINE_MAX_
#define LINE_MAX_ 96
#endif
#ifndef NAME_LEN
#define NAME_LEN 24
#endif
#ifndef MAX_KEYS
#define MAX_KEYS 8
#endif
#define MAX_ENTRIES 128

#define LICENCE "/etc/cfgnorm/licence"
#define TOOL_NAME "cfgnorm"
#define TOOL_VERSION "1.4"
#define TOOL_ARG "CONFIG"
#include "legacy_main.h"

struct entry {
    char section[NAME_LEN];
    char key[NAME_LEN];
    char value[LINE_MAX_];
};

static struct entry table[MAX_ENTRIES];
static int entries, errors, lineno;

static void complain(const char *format, ...) {
    va_list args;
    printf("cfgnorm: line %d: ", lineno);
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    putchar('\n');
    errors++;
}

static int blank(char c) { return c == ' ' || c == '\t'; }

static void copy_name(char *to, const char *from) {
    strncpy(to, from, NAME_LEN - 1);
    to[NAME_LEN - 1] = '\0';
}

static void set(const char *section, const char *key, const char *value) {
    int in_section = 0;
    for (int i = 0; i < entries; i++) {
        if (strcmp(table[i].section, section) != 0) continue;
        if (strcmp(table[i].key, key) == 0) {
            strcpy(table[i].value, value);
            return;
        }
        in_section++;
    }
    if (in_section >= MAX_KEYS) {
        complain("section [%s] is full, '%s' dropped", section, key);
        return;
    }
    if (entries == MAX_ENTRIES) {
        complain("too many settings, '%s' dropped", key);
        return;
    }
    strcpy(table[entries].section, section);
    strcpy(table[entries].key, key);
    strcpy(table[entries].value, value);
    entries++;
}

static void print_value(const char *v) {
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        printf("%.*s\n", (int)(n - 2), v + 1);
        return;
    }
    const char *d = v + (*v == '+' || *v == '-');
    if (*d) {
        while (*d >= '0' && *d <= '9') d++;
        if (*d == '\0') {
            printf("%d\n", (int)strtol(v, NULL, 10));
            return;
        }
    }
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true")) {
        puts("true");
        return;
    }
    if (!strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcasecmp(v, "false")) {
        puts("false");
        return;
    }
    puts(v);
}

int main(int argc, char **argv) {
    int status;
    FILE *config = open_input(argc, argv, &status);
    if (!config) return status;
    char line[LINE_MAX_];
    char current[NAME_LEN] = "";
    while (fgets(line, sizeof line, config)) {
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = '\0';
        if (n && line[n - 1] == '\r') line[--n] = '\0';
        char *p = line;
        while (blank(*p)) p++;
        if (*p == '\0' || *p == '#' || *p == ';') continue;
        if (*p == '[') {
            char *close = strchr(p, ']');
            if (!close) {
                complain("unterminated section header");
                continue;
            }
            *close = '\0';
            copy_name(current, p + 1);
            continue;
        }
        char *eq = strchr(p, '=');
        if (!eq) {
            complain("missing '='");
            continue;
        }
        char *value = eq + 1;
        char *end = eq;
        while (end > p && blank(end[-1])) end--;
        *end = '\0';
        if (end == p) {
            complain("empty key");
            continue;
        }
        char key[NAME_LEN];
        copy_name(key, p);
        for (char *k = key; *k; k++)
            if (*k >= 'A' && *k <= 'Z') *k += 'a' - 'A';
        while (blank(*value)) value++;
        size_t m = strlen(value);
        while (m && value[m - 1] == ' ') value[--m] = '\0';
        set(current, key, value);
    }
    fclose(config);
    for (int i = 0; i < entries; i++) {
        printf("%s.%s=", table[i].section, table[i].key);
        print_value(table[i].value);
    }
    printf("; %d settings, %d errors\n", entries, errors);
    return errors;
}
