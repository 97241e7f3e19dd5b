#include "facade/json_value.h"

namespace parasim {

Value JsonToValue(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
    case nlohmann::ordered_json::value_t::discarded: return Value();
    case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(json.get<long long>());
    case nlohmann::ordered_json::value_t::number_unsigned: return Value(json.get<unsigned long long>());
    case nlohmann::ordered_json::value_t::number_float: return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Value out = Value::Array();
      for (const auto& item : json) out.Push(JsonToValue(item));
      return out;
    }
    case nlohmann::ordered_json::value_t::object: {
      Value out = Value::Object();
      for (auto it = json.begin(); it != json.end(); ++it) out.Set(it.key(), JsonToValue(it.value()));
      return out;
    }
    case nlohmann::ordered_json::value_t::binary: break;
  }
  return Value();   // binary: the modules never write it
}

}  // namespace parasim
