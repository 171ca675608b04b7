// A loaded model: the mapped GGUF file (or the shards of a split one), its hyper-parameters and its vocabulary. Immutable after
// model_load and shared (by shared_ptr) between the addon object and every engine that uses it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gguf/split.h"
#include "model/hparams.h"
#include "model/repack.h"
#include "model/weights.h"
#include "tokenizer/vocab.h"

namespace tmill {

struct model_load_options {
    bool vocab_only = false;   // metadata + tokenizer only (no weights); hyper-parameters read when present
    // The memory the process may use, in bytes (0: the machine's RAM): weights are repacked at load only when
    // all of them, repacked, fit in it (model/repack.h).
    uint64_t memory_limit = 0;
};

struct model {
    std::unique_ptr<gguf::shard_set> files;   // files->first() holds the metadata
    std::optional<tmill::hparams> hp;     // absent for vocab-only loads of files without model keys
    std::shared_ptr<const tok::vocab> vocab;
    std::optional<model_weights> weights;   // views into `files` (or `repacked`); absent for vocab-only loads
    repacked_weights repacked;              // the weights repacked at load for this machine's kernels
};

// Opens, parses and validates a model. Throws tmill::error naming the file and what is wrong.
std::shared_ptr<const model> model_load(const std::string & path, const model_load_options & options);

} // namespace tmill
