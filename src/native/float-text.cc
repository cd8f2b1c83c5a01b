// The JSON texts of a run of Float64 values in one call: for each finite value,
// the shortest digits that read back as the same double (C++17's
// std::to_chars), laid out as ECMAScript's Number::toString lays them out,
// plus ".0" on a whole value (src/json float text). Non-finite values get no
// bytes: the caller writes their names. Built at install by build.mjs; the
// JavaScript formatter is used wherever it is missing.
#include <node_api.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// The longest text a double can take: "-0.00000" then 17 digits.
constexpr size_t kMaxText = 25;

size_t WriteFinite(double v, char* out) {
  char* o = out;
  if (v == 0) {
    if (std::signbit(v)) *o++ = '-';
    std::memcpy(o, "0.0", 3);
    return o + 3 - out;
  }
  // Shortest round-trip digits in scientific form, [-]d[.ddd]e(+|-)xx[x]: the first digit, the
  // others (`rest`, k - 1 of them) and the exponent are read where to_chars put them, with no
  // copy of the digits first (that copy and a digit-by-digit parse were a third of the time).
  char sci[32];
  const std::to_chars_result res = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  const char* p = sci;
  if (*p == '-') {
    *o++ = '-';
    ++p;
  }
  const char first = p[0];
  const char* rest = p[1] == '.' ? p + 2 : p + 1;
  const char* e = res.ptr - 4;  // two or three exponent digits
  if (*e != 'e') --e;
  const int k = 1 + static_cast<int>(e - rest);
  int x = 0;
  for (const char* d = e + 2; d < res.ptr; ++d) x = x * 10 + (*d - '0');
  if (e[1] == '-') x = -x;
  // ECMAScript's n: the value is 0.d1d2...dk x 10^n.
  const int n = x + 1;
  if (k <= n && n <= 21) {  // whole: digits, zeros, ".0"
    *o++ = first;
    std::memcpy(o, rest, k - 1);
    o += k - 1;
    std::memset(o, '0', n - k);
    o += n - k;
    *o++ = '.';
    *o++ = '0';
  } else if (0 < n && n <= 21) {  // point inside the digits
    *o++ = first;
    std::memcpy(o, rest, n - 1);
    o += n - 1;
    *o++ = '.';
    std::memcpy(o, rest + n - 1, k - n);
    o += k - n;
  } else if (-6 < n && n <= 0) {  // small: "0.", zeros, digits
    *o++ = '0';
    *o++ = '.';
    std::memset(o, '0', -n);
    o += -n;
    *o++ = first;
    std::memcpy(o, rest, k - 1);
    o += k - 1;
  } else {  // exponent form: d[.ddd]e(+|-)x, the exponent without leading zeros
    *o++ = first;
    if (k > 1) {
      *o++ = '.';
      std::memcpy(o, rest, k - 1);
      o += k - 1;
    }
    *o++ = 'e';
    *o++ = x < 0 ? '-' : '+';
    const int m = x < 0 ? -x : x;
    if (m >= 100) *o++ = static_cast<char>('0' + m / 100);
    if (m >= 10) *o++ = static_cast<char>('0' + m / 10 % 10);
    *o++ = static_cast<char>('0' + m % 10);
  }
  return o - out;
}

bool TypedArrayOf(napi_env env, napi_value value, napi_typedarray_type want, size_t* length, void** data) {
  bool is = false;
  if (napi_is_typedarray(env, value, &is) != napi_ok || !is) return false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &type, length, data, &buffer, &offset) != napi_ok) return false;
  return type == want;
}

bool Index(napi_env env, napi_value value, uint32_t* out) { return napi_get_value_uint32(env, value, out) == napi_ok; }

// formatFloats(values: Float64Array, from, to, text: Uint8Array, at, ends: Uint32Array, endAt): number
// Writes the texts of values[from..to) one after another into `text` from
// byte `at`, the end of value i's text at ends[endAt + i - from] (a position
// in `text`); returns how many of the values are not finite (their texts are
// empty), or -1 when the arguments do not fit (wrong types, a range outside
// `values` or `ends`, under 25 bytes of `text` a value). Offsets instead of
// subarrays: a typed array made per call cost more than the formatting of a
// small selection's values (bench/analysis.md).
napi_value FormatFloats(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  napi_value result;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 7) return nullptr;
  size_t count, capacity, slots;
  void *values, *text, *ends;
  uint32_t from, to, at, end_at;
  if (!TypedArrayOf(env, argv[0], napi_float64_array, &count, &values) || !Index(env, argv[1], &from) || !Index(env, argv[2], &to) ||
      !TypedArrayOf(env, argv[3], napi_uint8_array, &capacity, &text) || !Index(env, argv[4], &at) ||
      !TypedArrayOf(env, argv[5], napi_uint32_array, &slots, &ends) || !Index(env, argv[6], &end_at) || from > to || to > count ||
      end_at > slots || slots - end_at < to - from || at > capacity || (capacity - at) / kMaxText < to - from || capacity > UINT32_MAX) {
    napi_create_int32(env, -1, &result);
    return result;
  }
  const double* in = static_cast<const double*>(values);
  char* out = static_cast<char*>(text);
  uint32_t* end = static_cast<uint32_t*>(ends) + end_at;
  size_t pos = at;
  int32_t non_finite = 0;
  for (uint32_t i = from; i < to; ++i) {
    if (std::isfinite(in[i])) pos += WriteFinite(in[i], out + pos);
    else ++non_finite;
    *end++ = static_cast<uint32_t>(pos);
  }
  napi_create_int32(env, non_finite, &result);
  return result;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "formatFloats", NAPI_AUTO_LENGTH, FormatFloats, nullptr, &fn);
  napi_set_named_property(env, exports, "formatFloats", fn);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
