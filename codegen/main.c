/* tgen's entry point: the command line is cli.c's, so the fuzz harnesses can call it too. */
#include "cli.h"

int main(int argc, char **argv) { return tgen_main(argc, argv); }
