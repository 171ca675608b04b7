// A stretch of memory the library reads but does not own: a view, like the tensor data inside a mapping.
#pragma once

#include <cstddef>

namespace tmill {

struct byte_range {
    const void * data = nullptr;
    size_t bytes = 0;
};

} // namespace tmill
