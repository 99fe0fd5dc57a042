/*
 * common/version.c: see common/version.h.  The library versions are the
 * ones loaded at run time (what a bug report needs), not the headers'.
 */
#include "common/version.h"

#include <curl/curl.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>

#include "outbox/plugin.h"

void outbox_print_version(FILE *out, const char *program)
{
	int pq = PQlibVersion();

	fprintf(out, "%s (outboxd) %s\n", program, PACKAGE_VERSION);
	fprintf(out, "plugin ABI %d.%d\n", OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR);
	fprintf(out, "libpq %d.%d\n", pq / 10000, pq % 10000);
	fprintf(out, "libcurl %s\n", curl_version_info(CURLVERSION_NOW)->version);
	fprintf(out, "jansson %s\n", jansson_version_str());
	fprintf(out, "%s\n", OpenSSL_version(OPENSSL_VERSION));
}
