// A JSON or YAML description file (DH table, drive description) as one tree with source
// locations, and strict accessors whose messages name the file, the line and column (YAML; JSON
// syntax errors also carry them) and the key path ("joints[2].gear_ratio").
//
// JSON is read with nlohmann-json, YAML with yaml-cpp; both become the same DocumentNode tree so
// that one reader serves both formats. Scalars keep their text and are converted on request
// (numbers with full consumption: "1.5x" is an error, not 1.5).
#ifndef DYNID_MODELS_INTERNAL_DESCRIPTION_DOCUMENT_H_
#define DYNID_MODELS_INTERNAL_DESCRIPTION_DOCUMENT_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace dynid::models::internal {

struct DocumentNode {
  enum class Kind { kNull, kScalar, kList, kMap };
  Kind kind = Kind::kNull;
  std::string scalar;               // text of a scalar
  bool quoted = false;              // a JSON string or a quoted YAML scalar
  std::vector<DocumentNode> items;  // kList
  std::vector<std::pair<std::string, DocumentNode>> members;  // kMap, in file order
  std::string source;  // file name (or the caller's label for text)
  std::string path;    // key path from the root, e.g. "joints[2].gear_ratio" ("" for the root)
  int line = 0, column = 0;  // 1-based; 0 when the format does not give them (JSON values)

  // "file:line:column: 'path'" (or "file: 'path'"), the prefix of every message about this node.
  std::string Where() const;
  // Member `key` of a map, nullptr if absent (or if this is not a map).
  const DocumentNode* Find(const std::string& key) const;
};

enum class DocumentFormat { kJson, kYaml };

// Format from the file extension: .json → JSON, .yaml/.yml → YAML; false otherwise.
bool DocumentFormatFromPath(const std::string& path, DocumentFormat* format, std::string* error);

// Parses text (source names it in messages). False with a message on a syntax error or
// duplicate map keys.
bool ParseDocument(const std::string& text, DocumentFormat format, const std::string& source,
                   DocumentNode* root, std::string* error);
// The same with the format named by `format_name` ("json" or "yaml"; anything else is an error
// naming `source`).
bool ParseDocument(const std::string& text, const std::string& format_name,
                   const std::string& source, DocumentNode* root, std::string* error);
// Reads and parses a file, the format from its extension.
bool ReadDocumentFile(const std::string& path, DocumentNode* root, std::string* error);

// Strict accessors: false with "<where>: expected ..." in *error.
bool ExpectMap(const DocumentNode& node, std::string* error);
bool ExpectList(const DocumentNode& node, std::string* error);
// Every key of the map is one of `allowed` (the message lists them).
bool CheckKeys(const DocumentNode& node, std::initializer_list<const char*> allowed,
               std::string* error);
bool GetNumber(const DocumentNode& node, double* value, std::string* error);
bool GetBool(const DocumentNode& node, bool* value, std::string* error);
bool GetString(const DocumentNode& node, std::string* value, std::string* error);
// A list of exactly `size` numbers (size < 0: any length).
bool GetNumberList(const DocumentNode& node, int size, std::vector<double>* values,
                   std::string* error);
// Member `key` when present: *found tells; false only on a malformed value.
bool GetOptionalNumber(const DocumentNode& map, const char* key, double* value, std::string* error);
bool GetOptionalBool(const DocumentNode& map, const char* key, bool* value, std::string* error);
// A required member: "<where of the map>: missing key 'key'".
const DocumentNode* Require(const DocumentNode& map, const char* key, std::string* error);

}  // namespace dynid::models::internal

#endif  // DYNID_MODELS_INTERNAL_DESCRIPTION_DOCUMENT_H_
