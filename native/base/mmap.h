// A read-only memory mapping of a whole file (RAII). An empty file maps to {nullptr, 0}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tmill {

class mapped_file {
public:
    mapped_file() = default;
    // Maps `path` read-only. Throws tmill::error(io) "<path>: <what failed>: <strerror>".
    static mapped_file open_read_only(const std::string & path);
    ~mapped_file();

    mapped_file(mapped_file && other) noexcept;
    mapped_file & operator=(mapped_file && other) noexcept;
    mapped_file(const mapped_file &) = delete;
    mapped_file & operator=(const mapped_file &) = delete;

    const uint8_t * data() const { return data_; }
    size_t size() const { return size_; }

private:
    void release() noexcept;

    const uint8_t * data_ = nullptr;  // (size_) bytes, PROT_READ
    size_t size_ = 0;
};

} // namespace tmill
