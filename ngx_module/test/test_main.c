/* cmocka tests for the module's C helpers: one binary, one group a file. */

#include "module_tests.h"


int
main(void)
{
    int  failed = 0;

    failed += run_chain_tests();

    return failed ? 1 : 0;
}
