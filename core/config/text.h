/*
 * config/text.h: byte-level checks of configuration text, shared by the
 * relay.ini parser and the plugin option checks (plugin/options.c).
 *
 * Both take borrowed, NUL-terminated or counted text and allocate nothing.
 */
#ifndef OUTBOX_CORE_CONFIG_TEXT_H
#define OUTBOX_CORE_CONFIG_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Offset of the first byte of s[0..n) that does not start a well-formed
 * UTF-8 sequence (overlong forms, surrogates and code points above
 * U+10FFFF are ill-formed), or -1 when all n bytes are valid UTF-8.
 */
long cfg_text_utf8_error(const char *s, size_t n);

/*
 * True when v looks like a credential rather than a name or an address:
 * a well-known token prefix ("sk-", "ghp_", "AKIA", "xoxb-", a JWT's
 * "eyJ", ...) or a long run (32 or more) of token characters that mixes
 * upper case, lower case and digits.  Such a value is never echoed in a
 * message: a false positive only makes a message less specific.
 */
bool cfg_text_looks_like_secret(const char *v);

#endif
