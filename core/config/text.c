/*
 * config/text.c: UTF-8 validation and the "looks like a pasted secret"
 * heuristic (see config/text.h).
 */
#include "config/text.h"

#include <ctype.h>
#include <string.h>

/* Length of the well-formed sequence at s (n bytes left), or 0. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0; /* continuation byte, overlong lead 0xC0/0xC1, or > U+10FFFF */
	if (n < len)
		return 0;
	/* The second byte's range rules out overlongs, surrogates and > U+10FFFF. */
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	}
	return len;
}

long cfg_text_utf8_error(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		size_t len = utf8_seq_len(u + i, n - i);

		if (len == 0)
			return (long)i;
		i += len;
	}
	return -1;
}

static bool is_token_char(unsigned char c)
{
	return isalnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
}

/* A run of >= 32 token characters with upper case, lower case and digits. */
static bool has_random_run(const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	while (*p) {
		size_t len = 0;
		bool upper = false, lower = false, digit = false;

		for (; *p && is_token_char(*p); p++, len++) {
			upper |= isupper(*p) != 0;
			lower |= islower(*p) != 0;
			digit |= isdigit(*p) != 0;
		}
		if (len >= 32 && upper && lower && digit)
			return true;
		if (*p)
			p++;
	}
	return false;
}

bool cfg_text_looks_like_secret(const char *v)
{
	/* Published prefixes of API keys and tokens (OpenAI, Anthropic, Stripe,
	 * GitHub, GitLab, Slack, AWS access keys, Google API keys, JWTs). */
	static const char *const prefixes[] = {
		"sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_",
		"glpat-", "xoxb-", "xoxp-", "xoxa-", "AKIA", "ASIA", "AIza", "eyJ",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (strncmp(v, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	}
	return has_random_run(v);
}
