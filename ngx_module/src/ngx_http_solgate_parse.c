#include <string.h>

#include "ngx_http_solgate_parse.h"


#define NGX_HTTP_SOLGATE_MAX_ID  64


static int
ngx_http_solgate_is_word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}


static int
ngx_http_solgate_has_prefix(const unsigned char *s, size_t len,
    const char *prefix)
{
    size_t  n = strlen(prefix);

    return len >= n && strncmp((const char *) s, prefix, n) == 0;
}


const char *
ngx_http_solgate_parse_url(const unsigned char *s, size_t len,
    ngx_http_solgate_url_t *url)
{
    size_t  i, start;

    memset(url, 0, sizeof(*url));

    if (ngx_http_solgate_has_prefix(s, len, "https://")) {
        url->https = 1;
        start = sizeof("https://") - 1;

    } else if (ngx_http_solgate_has_prefix(s, len, "http://")) {
        start = sizeof("http://") - 1;

    } else {
        return "must start with \"http://\" or \"https://\"";
    }

    for (i = start; i < len; i++) {
        if (s[i] <= ' ' || s[i] == 0x7f || s[i] == '#') {
            return "contains a space, a control character or '#'";
        }
    }

    for (i = start; i < len && s[i] != '/' && s[i] != '?'; i++) {
        if (s[i] == '@') {
            return "must not contain credentials before the host";
        }
    }

    if (i == start) {
        return "has no host";
    }

    if (i < len && s[i] == '?') {
        return "must have a path before the query, as in \"/?key=...\"";
    }

    url->authority = s + start;
    url->authority_len = i - start;
    url->path = s + i;
    url->path_len = len - i;

    return NULL;
}


const char *
ngx_http_solgate_check_id(const unsigned char *s, size_t len)
{
    size_t  i;

    if (len == 0 || len > NGX_HTTP_SOLGATE_MAX_ID) {
        return "must be 1 to 64 characters long";
    }

    for (i = 0; i < len; i++) {
        if (!ngx_http_solgate_is_word_char(s[i])) {
            return "may contain only letters, digits, '-', '_' and '.'";
        }
    }

    return NULL;
}


/* "k:v,k:v": each key and value a non-empty word, one ':' per pair. */
const char *
ngx_http_solgate_check_tags(const unsigned char *s, size_t len)
{
    size_t  i, key_len, value_len;
    int     in_value;

    key_len = 0;
    value_len = 0;
    in_value = 0;

    for (i = 0; i <= len; i++) {
        if (i == len || s[i] == ',') {
            if (!in_value || key_len == 0 || value_len == 0) {
                return "must be a list of key:value pairs, as in "
                       "\"family:archive,region:us\"";
            }

            key_len = 0;
            value_len = 0;
            in_value = 0;
            continue;
        }

        if (s[i] == ':') {
            if (in_value) {
                return "has a pair with more than one ':'";
            }

            in_value = 1;
            continue;
        }

        if (!ngx_http_solgate_is_word_char(s[i])) {
            return "may contain only letters, digits, '-', '_' and '.' "
                   "around ':' and ','";
        }

        if (in_value) {
            value_len++;

        } else {
            key_len++;
        }
    }

    return NULL;
}


const char *
ngx_http_solgate_check_methods(const unsigned char *s, size_t len)
{
    size_t  i, run;

    run = 0;

    for (i = 0; i <= len; i++) {
        if (i == len || s[i] == '|') {
            if (run == 0) {
                return "has an empty method name";
            }

            run = 0;
            continue;
        }

        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')
              || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '*'))
        {
            return "method names may contain only letters, digits, '_' and "
                   "'*', joined by '|'";
        }

        run++;
    }

    return NULL;
}
