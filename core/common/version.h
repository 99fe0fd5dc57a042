/*
 * common/version.h: what --version prints, for every program.
 */
#ifndef OUTBOX_CORE_VERSION_H
#define OUTBOX_CORE_VERSION_H

#include <stdio.h>

/*
 * Writes "PROGRAM (outboxd) VERSION", the plugin ABI and the versions of
 * the libraries it runs with (libpq, libcurl, jansson, OpenSSL), one per
 * line; a program adds lines for libraries only it links.
 */
void outbox_print_version(FILE *out, const char *program);

#endif
