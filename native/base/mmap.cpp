// NOTE(mmap): the mapping is private and read-only, so a bug elsewhere can never write into a model
// file; the descriptor is closed right after mmap because the mapping keeps the file alive.
#include "base/mmap.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

namespace tmill {

namespace {

[[noreturn]] void throw_io(const std::string & path, const char * what, int err) {
    throw error(error_code::io, path + ": " + what + ": " + std::strerror(err));
}

} // namespace

mapped_file mapped_file::open_read_only(const std::string & path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_io(path, "cannot open file", errno);

    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw_io(path, "cannot stat file", err);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw error(error_code::io, path + ": not a regular file");
    }

    mapped_file m;
    if (st.st_size > 0) {
        void * p = ::mmap(nullptr, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw_io(path, "cannot mmap file", err);
        }
        m.data_ = static_cast<const uint8_t *>(p);
        m.size_ = (size_t) st.st_size;
    }
    ::close(fd);
    return m;
}

mapped_file::~mapped_file() { release(); }

mapped_file::mapped_file(mapped_file && other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

mapped_file & mapped_file::operator=(mapped_file && other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        other.data_ = nullptr;
        other.size_ = 0;
    }
    return *this;
}

void mapped_file::release() noexcept {
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

} // namespace tmill
