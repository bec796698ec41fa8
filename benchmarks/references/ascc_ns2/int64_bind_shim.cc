// Debian's libtclcl is built without HAVE_INT64, so it lacks TclObject::bind for int64_t
// variables, which ns-2 declares and only its queue monitors use (the aSCC scripts create
// none). This build of the aSCC authors' ns-2 refuses them loudly instead of linking
// against nothing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#define HAVE_INT64 1
#include "tclcl.h"
void TclObject::bind(const char* var, int64_t*) {
    std::fprintf(stderr, "this ns-2 build cannot bind the int64 variable %s (queue monitors are not supported)\n", var);
    std::abort();
}
