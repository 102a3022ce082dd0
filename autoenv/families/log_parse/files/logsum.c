/* logsum 2.3: the operations team's log summariser, as log-parse level 5 ships it (compiled, stripped, no source).
 *
 * Its behaviour is the task's specification, quirks included: the solver finds it by running the binary. What a
 * 2003 C program gets "wrong" is what the hidden logs exercise:
 *   - a line is read with fgets into LINE_MAX_ bytes: a longer line is cut, and its rest read as a line of its own;
 *   - a NUL byte ends the line as C sees it (the rest of that line is never looked at);
 *   - one trailing '\r' is dropped; an empty line is skipped; every other line is a record, valid or malformed;
 *   - a level is matched by its prefix (WARNING is WARN, ERRORS is ERROR), case-sensitively;
 *   - a service name keeps its first SVC_LEN - 1 bytes (two long names can become one, a UTF-8 character be cut);
 *   - durations are summed in 32-bit unsigned arithmetic (they wrap), and the mean is the integer quotient;
 *   - at most MAX_SVC services are tracked: a record of a service first seen when the table is full counts in
 *     the totals and levels but in no service's row;
 *   - rows are sorted by count (most first), then by the name's bytes (strcmp).
 * The time stamp is checked for its place and length only, and the message is never read.
 *
 * Compile-time parameters (autoenv.families.log_parse.legacy draws them per task): LINE_MAX_, SVC_LEN, MAX_SVC;
 * NO_LICENCE for the host's build.
 * The licence file lets the tests remove the tool (and any copy of it) from the machine that grades a replacement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LINE_MAX_
#define LINE_MAX_ 128
#endif
#ifndef SVC_LEN
#define SVC_LEN 11
#endif
#ifndef MAX_SVC
#define MAX_SVC 20
#endif

#define LICENCE "/etc/logsum/licence"
#define TOOL_NAME "logsum"
#define TOOL_VERSION "2.3"
#define TOOL_ARG "LOG"
#include "legacy_main.h"

struct service {
    char name[SVC_LEN];
    unsigned count;
    unsigned total_ms;
    unsigned max_ms;
};

static struct service table[MAX_SVC];
static int services;
static unsigned records, malformed, levels[4];
static const char *LEVEL_NAMES[4] = {"DEBUG", "INFO", "WARN", "ERROR"};

static int level_of(const char *token) {
    for (int i = 0; i < 4; i++)
        if (strncmp(token, LEVEL_NAMES[i], strlen(LEVEL_NAMES[i])) == 0) return i;
    return -1;
}

/* [YYYY-MM-DD HH:MM:SS] LEVEL service pid=PID DURATIONms "message" */
static int parse(char *p, int *level, char *name, unsigned *ms) {
    if (p[0] != '[' || strlen(p) < 22 || p[20] != ']' || p[21] != ' ') return 0;
    p += 22;
    char *end = strchr(p, ' ');
    if (!end) return 0;
    *end = '\0';
    if ((*level = level_of(p)) < 0) return 0;
    p = end + 1;
    end = strchr(p, ' ');
    if (!end || end == p) return 0;
    *end = '\0';
    strncpy(name, p, SVC_LEN - 1);
    name[SVC_LEN - 1] = '\0';
    p = end + 1;
    if (strncmp(p, "pid=", 4) != 0) return 0;
    p += 4;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') p++;
    if (*p++ != ' ') return 0;
    if (*p < '0' || *p > '9') return 0;
    unsigned value = 0;
    while (*p >= '0' && *p <= '9') value = value * 10u + (unsigned)(*p++ - '0');
    if (strncmp(p, "ms ", 3) != 0) return 0;
    *ms = value;
    return 1;
}

static int by_count(const void *a, const void *b) {
    const struct service *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

int main(int argc, char **argv) {
    int status;
    FILE *log = open_input(argc, argv, &status);
    if (!log) return status;
    char line[LINE_MAX_];
    while (fgets(line, sizeof line, log)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = '\0';
        if (n && line[n - 1] == '\r') line[--n] = '\0';
        if (n == 0) continue;
        records++;
        int level;
        char name[SVC_LEN];
        unsigned ms;
        if (!parse(line, &level, name, &ms)) {
            malformed++;
            continue;
        }
        levels[level]++;
        int i = 0;
        while (i < services && strcmp(table[i].name, name) != 0) i++;
        if (i == services) {
            if (services == MAX_SVC) continue;
            strcpy(table[services++].name, name);
        }
        table[i].count++;
        table[i].total_ms += ms;
        if (ms > table[i].max_ms) table[i].max_ms = ms;
    }
    fclose(log);
    qsort(table, services, sizeof table[0], by_count);
    printf("logsum 2.3 report\nrecords %u\nmalformed %u\n", records, malformed);
    for (int i = 0; i < 4; i++) printf("%-5s %u\n", LEVEL_NAMES[i], levels[i]);
    printf("%-*s %6s %8s %8s\n", SVC_LEN - 1, "service", "count", "mean_ms", "max_ms");
    for (int i = 0; i < services; i++)
        printf("%-*s %6u %8u %8u\n", SVC_LEN - 1, table[i].name, table[i].count, table[i].total_ms / table[i].count,
               table[i].max_ms);
    return 0;
}
