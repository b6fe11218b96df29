#include "dynid/models/internal/description_document.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace dynid::models::internal {
namespace {

std::string ChildPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string ItemPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

bool ConvertJson(const nlohmann::json& value, const std::string& source, const std::string& path,
                 DocumentNode* node, std::string* error) {
  node->source = source;
  node->path = path;
  if (value.is_null()) {
    node->kind = DocumentNode::Kind::kNull;
  } else if (value.is_object()) {
    node->kind = DocumentNode::Kind::kMap;
    for (auto it = value.begin(); it != value.end(); ++it) {
      node->members.emplace_back(it.key(), DocumentNode());
      if (!ConvertJson(it.value(), source, ChildPath(path, it.key()), &node->members.back().second,
                       error)) {
        return false;
      }
    }
  } else if (value.is_array()) {
    node->kind = DocumentNode::Kind::kList;
    node->items.resize(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
      if (!ConvertJson(value[i], source, ItemPath(path, i), &node->items[i], error)) return false;
    }
  } else {
    node->kind = DocumentNode::Kind::kScalar;
    if (value.is_string()) {
      node->scalar = value.get<std::string>();
      node->quoted = true;
    } else {
      node->scalar = value.dump();
    }
  }
  return true;
}

bool ConvertYaml(const YAML::Node& value, const std::string& source, const std::string& path,
                 DocumentNode* node, std::string* error) {
  node->source = source;
  node->path = path;
  const YAML::Mark mark = value.Mark();
  if (mark.line >= 0) {
    node->line = mark.line + 1;
    node->column = mark.column + 1;
  }
  switch (value.Type()) {
    case YAML::NodeType::Map:
      node->kind = DocumentNode::Kind::kMap;
      for (const auto& member : value) {
        const std::string key = member.first.as<std::string>();
        for (const auto& existing : node->members) {
          if (existing.first == key) {
            *error = source + ":" + std::to_string(member.first.Mark().line + 1) + ":" +
                     std::to_string(member.first.Mark().column + 1) + ": key '" +
                     ChildPath(path, key) + "' appears twice";
            return false;
          }
        }
        node->members.emplace_back(key, DocumentNode());
        if (!ConvertYaml(member.second, source, ChildPath(path, key), &node->members.back().second,
                         error)) {
          return false;
        }
      }
      break;
    case YAML::NodeType::Sequence: {
      node->kind = DocumentNode::Kind::kList;
      node->items.resize(value.size());
      size_t i = 0;
      for (const auto& item : value) {
        if (!ConvertYaml(item, source, ItemPath(path, i), &node->items[i], error)) return false;
        ++i;
      }
      break;
    }
    case YAML::NodeType::Scalar:
      node->kind = DocumentNode::Kind::kScalar;
      node->scalar = value.Scalar();
      node->quoted = value.Tag() == "!";  // yaml-cpp tags quoted scalars with "!"
      break;
    default:
      node->kind = DocumentNode::Kind::kNull;
      break;
  }
  return true;
}

const char* KindName(DocumentNode::Kind kind) {
  switch (kind) {
    case DocumentNode::Kind::kNull:
      return "nothing";
    case DocumentNode::Kind::kScalar:
      return "a scalar";
    case DocumentNode::Kind::kList:
      return "a list";
    case DocumentNode::Kind::kMap:
      return "a map";
  }
  return "?";
}

}  // namespace

std::string DocumentNode::Where() const {
  std::string where = source;
  if (line > 0) where += ":" + std::to_string(line) + ":" + std::to_string(column);
  where += path.empty() ? ": top level" : ": '" + path + "'";
  return where;
}

const DocumentNode* DocumentNode::Find(const std::string& key) const {
  for (const auto& member : members) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

bool DocumentFormatFromPath(const std::string& path, DocumentFormat* format, std::string* error) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".json")) {
    *format = DocumentFormat::kJson;
  } else if (ends_with(".yaml") || ends_with(".yml")) {
    *format = DocumentFormat::kYaml;
  } else {
    *error = path + ": expected a .json, .yaml or .yml file";
    return false;
  }
  return true;
}

bool ParseDocument(const std::string& text, DocumentFormat format, const std::string& source,
                   DocumentNode* root, std::string* error) {
  *root = DocumentNode();
  if (format == DocumentFormat::kJson) {
    // The parser's own message carries the line and column of a syntax error. Duplicate keys,
    // which nlohmann would resolve silently (last wins), are rejected through the callback: one
    // set of keys per open object.
    std::vector<std::vector<std::string>> open_objects;
    std::string duplicate;
    const nlohmann::json::parser_callback_t track_keys =
        [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          using Event = nlohmann::json::parse_event_t;
          if (event == Event::object_start) {
            open_objects.emplace_back();
          } else if (event == Event::object_end && !open_objects.empty()) {
            open_objects.pop_back();
          } else if (event == Event::key && !open_objects.empty()) {
            const std::string key = parsed.get<std::string>();
            for (const std::string& seen : open_objects.back()) {
              if (seen == key && duplicate.empty()) duplicate = key;
            }
            open_objects.back().push_back(key);
          }
          return true;
        };
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(text, track_keys);
    } catch (const nlohmann::json::parse_error& e) {
      *error = source + ": " + e.what();
      return false;
    }
    if (!duplicate.empty()) {
      *error = source + ": key '" + duplicate + "' appears twice in one object";
      return false;
    }
    return ConvertJson(value, source, "", root, error);
  }
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    *error = source + ":" + std::to_string(e.mark.line + 1) + ":" +
             std::to_string(e.mark.column + 1) + ": " + e.msg;
    return false;
  }
  return ConvertYaml(value, source, "", root, error);
}

bool ParseDocument(const std::string& text, const std::string& format_name,
                   const std::string& source, DocumentNode* root, std::string* error) {
  DocumentFormat format;
  if (format_name == "json") {
    format = DocumentFormat::kJson;
  } else if (format_name == "yaml") {
    format = DocumentFormat::kYaml;
  } else {
    *error = source + ": format must be 'json' or 'yaml', got '" + format_name + "'";
    return false;
  }
  return ParseDocument(text, format, source, root, error);
}

bool ReadDocumentFile(const std::string& path, DocumentNode* root, std::string* error) {
  DocumentFormat format;
  if (!DocumentFormatFromPath(path, &format, error)) return false;
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open file";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseDocument(text.str(), format, path, root, error);
}

bool ExpectMap(const DocumentNode& node, std::string* error) {
  if (node.kind == DocumentNode::Kind::kMap) return true;
  *error = node.Where() + ": expected a map, got " + KindName(node.kind);
  return false;
}

bool ExpectList(const DocumentNode& node, std::string* error) {
  if (node.kind == DocumentNode::Kind::kList) return true;
  *error = node.Where() + ": expected a list, got " + KindName(node.kind);
  return false;
}

bool CheckKeys(const DocumentNode& node, std::initializer_list<const char*> allowed,
               std::string* error) {
  if (!ExpectMap(node, error)) return false;
  for (const auto& member : node.members) {
    bool known = false;
    for (const char* key : allowed) known = known || member.first == key;
    if (!known) {
      std::string list;
      for (const char* key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
      *error = member.second.Where() + ": unknown key '" + member.first +
               "' (expected one of: " + list + ")";
      return false;
    }
  }
  return true;
}

bool GetNumber(const DocumentNode& node, double* value, std::string* error) {
  if (node.kind == DocumentNode::Kind::kScalar && !node.quoted && !node.scalar.empty()) {
    const char* begin = node.scalar.c_str();
    char* end = nullptr;
    errno = 0;
    const double parsed = std::strtod(begin, &end);
    if (end == begin + node.scalar.size() && errno == 0 && std::isfinite(parsed)) {
      *value = parsed;
      return true;
    }
  }
  *error = node.Where() + ": expected a finite number, got " +
           (node.kind == DocumentNode::Kind::kScalar ? "'" + node.scalar + "'"
                                                     : std::string(KindName(node.kind)));
  return false;
}

bool GetBool(const DocumentNode& node, bool* value, std::string* error) {
  if (node.kind == DocumentNode::Kind::kScalar && !node.quoted) {
    if (node.scalar == "true") {
      *value = true;
      return true;
    }
    if (node.scalar == "false") {
      *value = false;
      return true;
    }
  }
  *error = node.Where() + ": expected true or false";
  return false;
}

bool GetString(const DocumentNode& node, std::string* value, std::string* error) {
  if (node.kind == DocumentNode::Kind::kScalar && !node.scalar.empty()) {
    *value = node.scalar;
    return true;
  }
  *error = node.Where() + ": expected a non-empty string";
  return false;
}

bool GetNumberList(const DocumentNode& node, int size, std::vector<double>* values,
                   std::string* error) {
  if (!ExpectList(node, error)) return false;
  if (size >= 0 && static_cast<int>(node.items.size()) != size) {
    *error = node.Where() + ": expected " + std::to_string(size) + " numbers, got " +
             std::to_string(node.items.size());
    return false;
  }
  values->resize(node.items.size());
  for (size_t i = 0; i < node.items.size(); ++i) {
    if (!GetNumber(node.items[i], &(*values)[i], error)) return false;
  }
  return true;
}

bool GetOptionalNumber(const DocumentNode& map, const char* key, double* value,
                       std::string* error) {
  const DocumentNode* node = map.Find(key);
  return node == nullptr || GetNumber(*node, value, error);
}

bool GetOptionalBool(const DocumentNode& map, const char* key, bool* value, std::string* error) {
  const DocumentNode* node = map.Find(key);
  return node == nullptr || GetBool(*node, value, error);
}

const DocumentNode* Require(const DocumentNode& map, const char* key, std::string* error) {
  const DocumentNode* node = map.Find(key);
  if (node == nullptr) *error = map.Where() + ": missing key '" + key + "'";
  return node;
}

}  // namespace dynid::models::internal
