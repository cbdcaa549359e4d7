// The doctest runner of the engine's C++ unit tests (`make cpp-test`).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "doctest/doctest.h"
