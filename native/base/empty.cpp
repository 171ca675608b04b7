// Keeps a static library non-empty while its component has no sources yet.
namespace tmill { int empty_translation_unit_marker = 0; }
