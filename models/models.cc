// Anchor translation unit of the dynid_models library (keeps the target non-empty while
// models are header-only templates).
namespace dynid::models {
const char* LibraryName() { return "dynid_models"; }
}  // namespace dynid::models
