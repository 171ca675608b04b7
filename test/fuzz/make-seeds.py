#!/usr/bin/env python3
# Writes the committed seed corpora under test/fuzz/corpus/<target>/ (run from the repository root; the
# shared models come from ../shared or $TOKENMILL_SHARED). Seeds are small valid (or nearly valid)
# inputs that start libFuzzer inside each parser's interesting states; docs/fuzzing.md describes them.
# The grammars of test/fuzz/grammars/*.gbnf (the schema-*.gbnf ones written by
# `node test/fuzz/schema-grammars.cjs` from the TypeScript json-schema-to-grammar) are seeds too.
import glob, os, struct, sys

shared = os.environ.get('TOKENMILL_SHARED', '../shared')
out = 'test/fuzz/corpus'


def write(target, name, data):
    os.makedirs(f'{out}/{target}', exist_ok=True)
    with open(f'{out}/{target}/{name}', 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- gguf: a small metadata-and-tensor file built here, and truncated headers of the shared models
def gstr(s):
    b = s.encode()
    return struct.pack('<Q', len(b)) + b


def small_gguf(version):
    kvs = [
        gstr('general.architecture') + struct.pack('<I', 8) + gstr('llama'),
        gstr('general.alignment') + struct.pack('<II', 4, 32),
        gstr('llama.context_length') + struct.pack('<IQ', 10, 128),
        gstr('f') + struct.pack('<If', 6, 1.5),
        gstr('b') + struct.pack('<IB', 7, 1),
        gstr('i8') + struct.pack('<Ib', 1, -3),
        gstr('d') + struct.pack('<Id', 12, 2.25),
        gstr('tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, 3) + gstr('<s>') + gstr('a') + gstr('b'),
        gstr('tokenizer.ggml.scores') + struct.pack('<IIQ', 9, 6, 3) + struct.pack('<3f', 0, -1, -2),
        gstr('nested') + struct.pack('<IIQ', 9, 9, 1) + struct.pack('<IQ', 4, 2) + struct.pack('<2I', 7, 9),
    ]
    # tensors: one f32 [4, 2], one q8_0 [32]
    tensors = [gstr('w') + struct.pack('<I', 2) + struct.pack('<2Q', 4, 2) + struct.pack('<IQ', 0, 0),
               gstr('q') + struct.pack('<I', 1) + struct.pack('<Q', 32) + struct.pack('<IQ', 8, 32)]
    head = b'GGUF' + struct.pack('<IQQ', version, len(tensors), len(kvs)) + b''.join(kvs) + b''.join(tensors)
    head += b'\0' * ((-len(head)) % 32)
    data = struct.pack('<8f', *range(8)) + b'\x00\x3c' + bytes(range(32))
    return head + data


write('gguf', 'small-v3.gguf', small_gguf(3))
write('gguf', 'small-v2.gguf', small_gguf(2))
write('gguf', 'header-only.gguf', b'GGUF' + struct.pack('<IQQ', 3, 0, 0))
for model, cut in [('stories260K.gguf', 4096), ('llama-2-tiny-random.gguf', 4096),
                   ('vocab/ggml-vocab-llama-bpe.gguf', 2048)]:
    with open(f'{shared}/models/{model}', 'rb') as f:
        write('gguf', 'head-' + os.path.basename(model).replace('.gguf', '') + f'-{cut}', f.read(cut))

# --- tokenizer: selector byte (vocab, flags) + text from the vocab test inputs
texts = []
with open(f'{shared}/models/vocab/ggml-vocab-llama-bpe.gguf.inp', encoding='utf-8') as f:
    texts = [t for t in f.read().split('\n__ggml_vocab_test__\n') if 0 < len(t.encode()) < 512][:12]
texts += ['<s> hello <|begin_of_text|> world</s>', '   \t\n\n  ', '\u00e9\u4e2d\U0001F600 x', 'byte\xff\xfe'.encode('latin-1').decode('latin-1')]
for i, t in enumerate(texts):
    write('tokenizer', f'text-{i:02d}', bytes([i * 37 % 256]) + t.encode('utf-8', 'surrogatepass'))
write('tokenizer', 'invalid-utf8', bytes([0x0C]) + b'\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x90\x28\xbc\xed\xa0\x80')

# --- gbnf-parser: the grammars the tests use, the README's example, schema-derived ones, a few errors
grammars = {
    'readme': 'root    ::= greeting (", " name)? "!"          # comment\ngreeting ::= "hello" | "hi"\nname    ::= [A-Z] [a-z]{1,15}\n',
    'escapes': 'root ::= "\\x41\\u00e9\\U0001F600\\n\\t\\"" [\\]\\[\\-\\^a-c] . [^\\x00-\\x1F]{2,} x\nx ::= ( "a" | ) {0,3} "b"+ "c"* "d"?\n',
    'err-undefined': 'root ::= foo\n',
    'err-unterminated': 'root ::= "abc\n',
    'err-bounds': 'root ::= "a"{3,2}\n',
    'err-range': 'root ::= [z-a]\n',
    'continuation': 'root ::= a\n  | b\na ::= "x"\nb ::= "y" (\n "z" )\n',
}
grammar_files = sorted(glob.glob('test/fuzz/grammars/*.gbnf'))
for path in grammar_files:
    grammars[os.path.basename(path)[:-5]] = open(path).read()
for name, text in grammars.items():
    write('gbnf-parser', name, text)

# --- grammar-matcher: selector byte (index into the sorted grammar files) + ops (0/1 token id u16, 2 raw bytes with length in the high nibble,
# 3 mask + probe id u16)
def ops_bytes(chunks):
    b = b''
    for chunk in chunks:
        b += bytes([0x02 | (len(chunk) << 4)]) + chunk
    return b


mask = bytes([3, 5, 0])
sel = lambda name: [os.path.basename(p)[:-5] for p in grammar_files].index(name)
write('grammar-matcher', 'json-object', bytes([sel('json')]) + mask + ops_bytes([b'{"a"', b': [1, ', b'true]', b'}']) + mask)
write('grammar-matcher', 'json-unicode', bytes([0]) + ops_bytes([b'{"\xc3\xa9', b'\\u00e9"', b':"x"}']) + mask)
write('grammar-matcher', 'schema-object', bytes([sel('schema-person')]) + ops_bytes([b'{"name": ', b'"Bob"', b', "age": 4', b'2}']) + mask)
write('grammar-matcher', 'repeat', bytes([sel('repeat-unicode')]) + ops_bytes([b'Once  ', b'[ab, ', b'\xe4\xb8\xad]', b'tail\n']) + mask)
write('grammar-matcher', 'tokens', bytes([0]) + mask + bytes([0, 100, 0, 1, 200, 1]) + mask + bytes([0, 0xff, 0x01]) + mask)
