#ifndef MODULE_TESTS_H
#define MODULE_TESTS_H

int run_chain_tests(void);

#endif
