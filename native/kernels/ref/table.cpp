// Fills the kernel table with the scalar reference kernels (every entry of kernels/entries.h).
#include "kernels/kernels.h"

namespace tmill::kernels::ref {

void fill(kernel_table & t) { TM_KERNEL_FILL_BODY }

} // namespace tmill::kernels::ref
