/* tgen's command line as a function (cli.c): main.c calls it, and so do the fuzz harnesses. */
#ifndef TGEN_CLI_H
#define TGEN_CLI_H

/* Runs tgen with argv[0] the program name. Returns the exit status: 0 ok, 1 errors in the
 * specs (printed as `file:line:col: error:`), 2 bad command line. */
int tgen_main(int argc, char **argv);

#endif
