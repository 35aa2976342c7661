// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <string.h>
#include "word.h"

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

int word_name_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	return n && (!max || n <= max) && s[0] != '.' && s[0] != '-' &&
	       strspn(s, ALNUM "_.-") == n;
}

int word_ifname_ok(const char *s)
{
	return word_name_ok(s, 15);
}

int word_ip_ok(const char *s)
{
	unsigned char b[16];

	return s && strlen(s) < 64 &&
	       (inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1);
}

int word_shell_inert(const char *s)
{
	return strspn(s, ALNUM "_.:-") == strlen(s);
}
