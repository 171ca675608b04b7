#include "sample/processor-registry.h"

#include "base/error.h"

#include <mutex>
#include <utility>

namespace tmill {

namespace {

struct registry {
    std::mutex mu;
    std::vector<std::pair<std::string, processor_factory>> entries;  // registration order
};

registry & the_registry() {
    static registry r;
    return r;
}

} // namespace

void register_logits_processor(const std::string & name, processor_factory factory) {
    TM_CHECK(!name.empty(), invalid_argument, "logits processor name must not be empty");
    TM_CHECK(static_cast<bool>(factory), invalid_argument, "logits processor '" + name + "' has no factory");
    registry & r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto & e : r.entries)
        TM_CHECK(e.first != name, invalid_argument, "logits processor '" + name + "' is already registered");
    r.entries.emplace_back(name, std::move(factory));
}

bool unregister_logits_processor(const std::string & name) {
    registry & r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto it = r.entries.begin(); it != r.entries.end(); ++it) {
        if (it->first == name) {
            r.entries.erase(it);
            return true;
        }
    }
    return false;
}

std::vector<std::string> registered_logits_processors() {
    registry & r = the_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    std::vector<std::string> names;
    for (const auto & e : r.entries) names.push_back(e.first);
    return names;
}

std::vector<processor_ptr> make_custom_processors(const xargs_map & xargs, const request_shape & shape) {
    std::vector<std::pair<std::string, processor_factory>> entries;
    {
        registry & r = the_registry();
        std::lock_guard<std::mutex> lock(r.mu);
        entries = r.entries;  // factories run unlocked: they may be slow or throw
    }
    std::vector<processor_ptr> out;
    for (const auto & e : entries) {
        processor_ptr p = e.second(xargs, shape);
        if (p) out.push_back(std::move(p));
    }
    return out;
}

} // namespace tmill
