/* The solgate_network word checks. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "ngx_http_solgate_parse.h"
#include "module_tests.h"


#define S(lit)  (const unsigned char *) (lit), sizeof(lit) - 1


static void
test_url_plain_host(void **state)
{
    ngx_http_solgate_url_t  url;

    assert_null(ngx_http_solgate_parse_url(S("http://sol_a"), &url));
    assert_int_equal(url.authority_len, 5);
    assert_memory_equal(url.authority, "sol_a", 5);
    assert_int_equal(url.path_len, 0);
    assert_false(url.https);
}


static void
test_url_https_with_path_and_key(void **state)
{
    ngx_http_solgate_url_t  url;

    assert_null(ngx_http_solgate_parse_url(
        S("https://rpc.vendor.example:443/v1/KEY?x=1"), &url));
    assert_true(url.https);
    assert_int_equal(url.authority_len, strlen("rpc.vendor.example:443"));
    assert_int_equal(url.path_len, strlen("/v1/KEY?x=1"));
    assert_memory_equal(url.path, "/v1/KEY?x=1", url.path_len);
}


static void
test_url_rejects(void **state)
{
    ngx_http_solgate_url_t  url;

    assert_non_null(ngx_http_solgate_parse_url(S("ftp://x"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("sol_a"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http://"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http:///path"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http://a b"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http://a/#frag"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http://u:p@host/"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http://host?k=1"), &url));
    assert_non_null(ngx_http_solgate_parse_url(S("http://h\x01/"), &url));
}


static void
test_id(void **state)
{
    assert_null(ngx_http_solgate_check_id(S("node-a")));
    assert_null(ngx_http_solgate_check_id(S("vendor_1.eu")));
    assert_non_null(ngx_http_solgate_check_id(S("")));
    assert_non_null(ngx_http_solgate_check_id(S("a b")));
    assert_non_null(ngx_http_solgate_check_id(S("a*")));
    assert_non_null(ngx_http_solgate_check_id(S("a:b")));
    assert_non_null(ngx_http_solgate_check_id(
        S("x123456789012345678901234567890123456789012345678901234567890123"
          "4")));
}


static void
test_tags(void **state)
{
    assert_null(ngx_http_solgate_check_tags(S("family:archive")));
    assert_null(ngx_http_solgate_check_tags(S("family:ledger,region:us")));
    assert_non_null(ngx_http_solgate_check_tags(S("")));
    assert_non_null(ngx_http_solgate_check_tags(S("family")));
    assert_non_null(ngx_http_solgate_check_tags(S("family:")));
    assert_non_null(ngx_http_solgate_check_tags(S(":x")));
    assert_non_null(ngx_http_solgate_check_tags(S("a:b,")));
    assert_non_null(ngx_http_solgate_check_tags(S("a:b,,c:d")));
    assert_non_null(ngx_http_solgate_check_tags(S("a:b:c")));
    assert_non_null(ngx_http_solgate_check_tags(S("a:b c")));
}


static void
test_methods(void **state)
{
    assert_null(ngx_http_solgate_check_methods(S("getBlock")));
    assert_null(ngx_http_solgate_check_methods(S("getBlock|getTransaction")));
    assert_null(ngx_http_solgate_check_methods(S("get*|simulateTransaction")));
    assert_non_null(ngx_http_solgate_check_methods(S("")));
    assert_non_null(ngx_http_solgate_check_methods(S("getBlock|")));
    assert_non_null(ngx_http_solgate_check_methods(S("|getBlock")));
    assert_non_null(ngx_http_solgate_check_methods(S("getBlock||getSlot")));
    assert_non_null(ngx_http_solgate_check_methods(S("getBlock,getSlot")));
    assert_non_null(ngx_http_solgate_check_methods(S("get-Block")));
}


int
run_parse_tests(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_url_plain_host),
        cmocka_unit_test(test_url_https_with_path_and_key),
        cmocka_unit_test(test_url_rejects),
        cmocka_unit_test(test_id),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_methods),
    };

    return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
