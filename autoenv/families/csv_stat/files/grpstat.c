/* grpstat 1.4: the data team's grouped statistic over a CSV extract, as csv-stat level 6 ships it (compiled,
 * stripped, no source).
 *
 * Its behaviour is the task's specification, quirks included: the solver finds it by running the binary. What a
 * 2001 C program gets "wrong" is what the hidden extracts exercise:
 *   - a line is read with fgets into LINE_MAX_ bytes: a longer line is cut, and its rest read as a line of its own;
 *   - a NUL byte ends the line as C sees it; one trailing '\r' is dropped; an empty line is skipped;
 *   - the first line is the header, whatever it holds; the group, value and status columns are found by their names
 *     compared byte for byte (case, spaces and a byte-order mark included) among the first MAX_FIELDS fields; a
 *     name not found: nothing printed, exit status 4 (an empty file has no header: the same);
 *   - a line is split on every comma (quotes mean nothing) into at most MAX_FIELDS fields, the rest dropped;
 *   - a row too short to hold the three columns is bad; a row whose status is not exactly OK_STATUS is skipped;
 *   - the value is read with strtod (leading white space, a sign, exponents, hexadecimal, inf and infinity, trailing
 *     junk ignored); a value strtod reads nothing of, or reads as nan, is bad;
 *   - values are converted to 32-bit float and summed in float (large values lose their cents, long columns drift),
 *     the mean is the float sum over the count; inf and -inf in one group make its mean a NaN (printed -nan);
 *   - a group name keeps its first NAME_LEN - 1 bytes (two long names can become one, a UTF-8 character be cut);
 *   - at most MAX_GROUPS groups are tracked: a row of a group first seen when the table is full counts in TOTAL
 *     only;
 *   - groups are printed in strcmp order of their (cut) names, values with printf's %.2f.
 *
 * Compile-time parameters (autoenv.families.csv_stat.legacy draws them per task): LINE_MAX_, NAME_LEN, MAX_GROUPS,
 * and the domain's GROUP_COL, VALUE_COL, OK_STATUS (string literals); NO_LICENCE for the host's build.
 * The licence file lets the tests remove the tool (and any copy of it) from the machine that grades a replacement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LINE_MAX_
#define LINE_MAX_ 96
#endif
#ifndef NAME_LEN
#define NAME_LEN 12
#endif
#ifndef MAX_GROUPS
#define MAX_GROUPS 10
#endif
#ifndef GROUP_COL
#define GROUP_COL "store"
#endif
#ifndef VALUE_COL
#define VALUE_COL "amount"
#endif
#ifndef OK_STATUS
#define OK_STATUS "ok"
#endif
#define STATUS_COL "status"
#define MAX_FIELDS 16

#define LICENCE "/etc/grpstat/licence"
#define TOOL_NAME "grpstat"
#define TOOL_VERSION "1.4"
#define TOOL_ARG "FILE"
#include "legacy_main.h"

struct group {
    char name[NAME_LEN];
    unsigned count;
    float sum;
    float max;
};

static struct group table[MAX_GROUPS];
static struct group total;
static int groups;
static unsigned rows, skipped, bad;

/* Cut the line at its '\n' and one '\r' before it; its length. */
static size_t chomp(char *line) {
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = '\0';
    if (n && line[n - 1] == '\r') line[--n] = '\0';
    return n;
}

static int split(char *line, char **fields) {
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p; p++) {
        if (*p != ',') continue;
        *p = '\0';
        if (n == MAX_FIELDS) break;
        fields[n++] = p + 1;
    }
    return n;
}

static int column(char **fields, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(fields[i], name) == 0) return i;
    fprintf(stderr, "grpstat: no column '%s'\n", name);
    return -1;
}

static void add(struct group *g, float v) {
    if (g->count == 0 || v > g->max) g->max = v;
    g->count++;
    g->sum += v;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct group *)a)->name, ((const struct group *)b)->name);
}

static void row(const char *name, const struct group *g) {
    printf("%-*s %6u %12.2f %12.2f\n", NAME_LEN - 1, name, g->count, g->sum / g->count, g->max);
}

int main(int argc, char **argv) {
    int status;
    FILE *in = open_input(argc, argv, &status);
    if (!in) return status;
    char line[LINE_MAX_];
    char *fields[MAX_FIELDS];
    if (!fgets(line, sizeof line, in)) line[0] = '\0';
    chomp(line);
    int n = split(line, fields);
    int gi = column(fields, n, GROUP_COL);
    int vi = gi < 0 ? -1 : column(fields, n, VALUE_COL);
    int si = vi < 0 ? -1 : column(fields, n, STATUS_COL);
    if (si < 0) {
        fclose(in);
        return 4;
    }
    int need = gi > vi ? gi : vi;
    if (si > need) need = si;
    while (fgets(line, sizeof line, in)) {
        if (chomp(line) == 0) continue;
        rows++;
        n = split(line, fields);
        if (n <= need) {
            bad++;
            continue;
        }
        if (strcmp(fields[si], OK_STATUS) != 0) {
            skipped++;
            continue;
        }
        char *end;
        double d = strtod(fields[vi], &end);
        if (end == fields[vi] || d != d) {
            bad++;
            continue;
        }
        float v = (float)d;
        char name[NAME_LEN];
        strncpy(name, fields[gi], NAME_LEN - 1);
        name[NAME_LEN - 1] = '\0';
        add(&total, v);
        int i = 0;
        while (i < groups && strcmp(table[i].name, name) != 0) i++;
        if (i == groups) {
            if (groups == MAX_GROUPS) continue;
            strcpy(table[groups++].name, name);
        }
        add(&table[i], v);
    }
    fclose(in);
    qsort(table, groups, sizeof table[0], by_name);
    printf("grpstat 1.4 report\nrows %u\nskipped %u\nbad %u\n", rows, skipped, bad);
    printf("%-*s %6s %12s %12s\n", NAME_LEN - 1, GROUP_COL, "count", "mean", "max");
    for (int i = 0; i < groups; i++) row(table[i].name, &table[i]);
    if (total.count)
        row("TOTAL", &total);
    else
        printf("%-*s %6u %12s %12s\n", NAME_LEN - 1, "TOTAL", 0u, "-", "-");
    return 0;
}
