/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/xml.c: libxml2 for the AWS answers (see aws/xml.h).
 */
#include "aws/xml.h"

#include <libxml/parser.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* libxml2 2.9 wants xmlInitParser() once before threads use it; every
 * caller of the library here comes through aws_xml_read(). */
static void init_parser(void)
{
	xmlInitParser();
}

xmlDoc *aws_xml_read(const char *body, size_t len)
{
	xmlDoc *doc;

	if (body == NULL || len == 0 || len > (size_t)INT_MAX)
		return NULL;
	(void)pthread_once(&init_once, init_parser);
	/* Without XML_PARSE_NOENT entities are not substituted, and without
	 * XML_PARSE_DTDLOAD no external subset is fetched. */
	doc = xmlReadMemory(body, (int)len, "aws.xml", NULL,
	                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	/* No AWS answer declares a DOCTYPE; one that does could only be
	 * defining entities for us to expand. */
	if (doc != NULL && doc->intSubset != NULL) {
		xmlFreeDoc(doc);
		return NULL;
	}
	return doc;
}

xmlNode *aws_xml_find(xmlNode *node, const char *name)
{
	for (xmlNode *n = node; n != NULL; n = n->next) {
		xmlNode *found;

		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (xmlStrcmp(n->name, (const xmlChar *)name) == 0)
			return n;
		found = aws_xml_find(n->children, name);
		if (found != NULL)
			return found;
	}
	return NULL;
}

xmlNode *aws_xml_child(xmlNode *parent, const char *name)
{
	return parent != NULL ? aws_xml_find(parent->children, name) : NULL;
}

char *aws_xml_text(const xmlNode *n)
{
	xmlChar *content;
	char *out;

	if (n == NULL)
		return NULL;
	content = xmlNodeGetContent(n);
	out = strdup(content != NULL ? (const char *)content : "");
	xmlFree(content);
	return out;
}

void aws_xml_text_buf(const xmlNode *n, char *out, size_t out_size)
{
	xmlChar *content = n != NULL ? xmlNodeGetContent(n) : NULL;

	if (out_size > 0)
		snprintf(out, out_size, "%s", content != NULL ? (const char *)content : "");
	xmlFree(content);
}
