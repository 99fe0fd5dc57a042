/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/xml.h: reading the XML answers of S3, STS and the query protocol's
 * errors with libxml2.
 *
 * The answers are data: documents are read without network access, DTD
 * loading or entity expansion, and a body that is not well-formed is
 * refused whole rather than half read.
 */
#ifndef OUTBOX_CORE_AWS_XML_H
#define OUTBOX_CORE_AWS_XML_H

#include <stddef.h>

#include <libxml/tree.h>

#include "common/compiler.h"

/*
 * Parses body (borrowed, len bytes, not NUL-terminated).  Returns a new
 * document the caller frees with xmlFreeDoc(), or NULL when the body is
 * not well-formed XML (a reference to an undeclared entity or to
 * character 0 included), declares a DOCTYPE, is empty, or memory ran out.
 * Safe from any thread.
 */
xmlDoc *aws_xml_read(const char *body, size_t len) OUTBOX_MUSTCHECK;

/* The first element named name among node, its siblings after it and
 * their descendants, depth first; NULL if none.  Borrowed from the
 * document.  Names match exactly: "Key" does not find <KeyCount>. */
xmlNode *aws_xml_find(xmlNode *node, const char *name);

/* The first element named name below parent (parent may be NULL); borrowed. */
xmlNode *aws_xml_child(xmlNode *parent, const char *name);

/* The text of n, references decoded, as a new string the caller frees with
 * free(); "" for an empty element; NULL when n is NULL or out of memory. */
char *aws_xml_text(const xmlNode *n) OUTBOX_MUSTCHECK;

/* The text of n into out, truncated to out_size; "" when n is NULL. */
void aws_xml_text_buf(const xmlNode *n, char *out, size_t out_size);

#endif
