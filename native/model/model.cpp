#include "model/model.h"

#include "base/error.h"
#include "kernels/kernels.h"

namespace tmill {

std::shared_ptr<const model> model_load(const std::string & path, const model_load_options & options) {
    auto m = std::make_shared<model>();
    m->files = gguf::shard_set::open(path);
    const gguf::file & meta = m->files->first();
    if (options.vocab_only) {
        // A vocab-only file may lack every model key; still report them when they are all there.
        try {
            m->hp = hparams_load(meta);
        } catch (const error &) {
            m->hp.reset();
        }
    } else {
        m->hp = hparams_load(meta);
    }
    m->vocab = tok::vocab::from_gguf(meta);
    if (m->hp) {
        TM_CHECK(int64_t(m->hp->n_vocab) >= int64_t(m->vocab->n_tokens()), gguf_invalid,
                 path + ": vocab_size " + std::to_string(m->hp->n_vocab) + " is smaller than the tokenizer's " +
                 std::to_string(m->vocab->n_tokens()) + " tokens");
    }
    if (!options.vocab_only) {
        m->weights = weights_load(*m->files, *m->hp);
        m->repacked = repack_weights(*m->weights, kernels::kernels_get(), options.memory_limit);
    }
    return m;
}

} // namespace tmill
