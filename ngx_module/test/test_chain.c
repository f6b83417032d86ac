/*
 * ngx_http_solgate_chain_copy over memory and file buffers.  The file
 * buffers are backed by a fake ngx_read_file that reads from memory.
 */

#include <ngx_config.h>
#include <ngx_core.h>

#include <stdarg.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ngx_http_solgate_module.h"
#include "module_tests.h"


static int  fake_read_fails;


/* file->name.data holds the file's whole content */
ssize_t
ngx_read_file(ngx_file_t *file, u_char *buf, size_t size, off_t offset)
{
    if (fake_read_fails) {
        return NGX_ERROR;
    }

    if ((size_t) offset + size > file->name.len) {
        size = file->name.len - (size_t) offset;
    }

    memcpy(buf, file->name.data + offset, size);
    return (ssize_t) size;
}


static void
memory_buf(ngx_buf_t *b, ngx_chain_t *cl, const char *text)
{
    memset(b, 0, sizeof(*b));
    b->pos = (u_char *) text;
    b->last = b->pos + strlen(text);
    b->memory = 1;
    cl->buf = b;
    cl->next = NULL;
}


static void
file_buf(ngx_buf_t *b, ngx_chain_t *cl, ngx_file_t *file, const char *text,
    off_t from, off_t to)
{
    memset(file, 0, sizeof(*file));
    file->name.data = (u_char *) text;
    file->name.len = strlen(text);

    memset(b, 0, sizeof(*b));
    b->in_file = 1;
    b->file = file;
    b->file_pos = from;
    b->file_last = to;
    cl->buf = b;
    cl->next = NULL;
}


static void
test_memory_chain(void **state)
{
    u_char       dst[32];
    ngx_buf_t    b1, b2;
    ngx_chain_t  c1, c2;

    memory_buf(&b1, &c1, "{\"jsonrpc\":");
    memory_buf(&b2, &c2, "\"2.0\"}");
    c1.next = &c2;

    assert_int_equal(ngx_http_solgate_chain_copy(&c1, dst, sizeof(dst)), 17);
    assert_memory_equal(dst, "{\"jsonrpc\":\"2.0\"}", 17);
}


static void
test_file_then_memory(void **state)
{
    u_char       dst[32];
    ngx_buf_t    b1, b2;
    ngx_file_t   file;
    ngx_chain_t  c1, c2;

    fake_read_fails = 0;
    file_buf(&b1, &c1, &file, "xx[1,2,3", 2, 8);
    memory_buf(&b2, &c2, "]");
    c1.next = &c2;

    assert_int_equal(ngx_http_solgate_chain_copy(&c1, dst, sizeof(dst)), 7);
    assert_memory_equal(dst, "[1,2,3]", 7);
}


static void
test_too_small_destination(void **state)
{
    u_char       dst[4];
    ngx_buf_t    b1;
    ngx_file_t   file;
    ngx_chain_t  c1;

    memory_buf(&b1, &c1, "12345");
    assert_int_equal(ngx_http_solgate_chain_copy(&c1, dst, sizeof(dst)), -1);

    file_buf(&b1, &c1, &file, "12345", 0, 5);
    assert_int_equal(ngx_http_solgate_chain_copy(&c1, dst, sizeof(dst)), -1);
}


static void
test_failed_read(void **state)
{
    u_char       dst[16];
    ngx_buf_t    b1;
    ngx_file_t   file;
    ngx_chain_t  c1;

    file_buf(&b1, &c1, &file, "12345", 0, 5);
    fake_read_fails = 1;
    assert_int_equal(ngx_http_solgate_chain_copy(&c1, dst, sizeof(dst)), -1);
    fake_read_fails = 0;
}


static void
test_empty_chain(void **state)
{
    u_char  dst[1];

    assert_int_equal(ngx_http_solgate_chain_copy(NULL, dst, 0), 0);
}


int
run_chain_tests(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_memory_chain),
        cmocka_unit_test(test_file_then_memory),
        cmocka_unit_test(test_too_small_destination),
        cmocka_unit_test(test_failed_read),
        cmocka_unit_test(test_empty_chain),
    };

    return cmocka_run_group_tests_name("chain", tests, NULL, NULL);
}
