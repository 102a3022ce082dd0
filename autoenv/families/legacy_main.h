/* What every legacy tool's main() begins with (autoenv/families/legacy_tool.py builds each tool with -I to this
 * folder): its --version, its usage error (status 1), its licence (3; not checked in the build the generator runs on
 * the host, -DNO_LICENCE), and the file its command line names, opened (2 when it cannot be). The tool's source
 * defines TOOL_NAME, TOOL_VERSION, TOOL_ARG and LICENCE before including it. */
#ifndef AUTOENV_LEGACY_MAIN_H
#define AUTOENV_LEGACY_MAIN_H

#include <stdio.h>
#include <string.h>

/* The input file, or NULL with *status what main returns (0 after --version). */
static FILE *open_input(int argc, char **argv, int *status) {
    *status = 0;
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        puts(TOOL_NAME " " TOOL_VERSION);
        return NULL;
    }
    if (argc != 2) {
        fputs("usage: " TOOL_NAME " " TOOL_ARG "\n", stderr);
        *status = 1;
        return NULL;
    }
#ifndef NO_LICENCE
    FILE *licence = fopen(LICENCE, "r");
    if (!licence) {
        fputs(TOOL_NAME ": no licence (" LICENCE ")\n", stderr);
        *status = 3;
        return NULL;
    }
    fclose(licence);
#endif
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, TOOL_NAME ": cannot open %s\n", argv[1]);
        *status = 2;
    }
    return in;
}

#endif
