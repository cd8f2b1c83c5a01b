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
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e(+|-)x
  char sci[32];
  const std::to_chars_result res = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
  const char* p = sci;
  if (*p == '-') {
    *o++ = '-';
    ++p;
  }
  char digits[20];
  int k = 0;
  digits[k++] = *p++;
  if (*p == '.') {
    for (++p; *p != 'e'; ++p) digits[k++] = *p;
  }
  ++p;  // 'e'
  const bool negative = *p == '-';
  int e = 0;
  for (++p; p < res.ptr; ++p) e = e * 10 + (*p - '0');
  // ECMAScript's n: the value is 0.d1d2...dk x 10^n.
  const int n = (negative ? -e : e) + 1;
  if (k <= n && n <= 21) {  // whole: digits, zeros, ".0"
    std::memcpy(o, digits, k);
    o += k;
    for (int i = k; i < n; ++i) *o++ = '0';
    *o++ = '.';
    *o++ = '0';
  } else if (0 < n && n <= 21) {  // point inside the digits
    std::memcpy(o, digits, n);
    o += n;
    *o++ = '.';
    std::memcpy(o, digits + n, k - n);
    o += k - n;
  } else if (-6 < n && n <= 0) {  // small: "0.", zeros, digits
    *o++ = '0';
    *o++ = '.';
    for (int i = n; i < 0; ++i) *o++ = '0';
    std::memcpy(o, digits, k);
    o += k;
  } else {  // exponent form: d[.ddd]e(+|-)x
    *o++ = digits[0];
    if (k > 1) {
      *o++ = '.';
      std::memcpy(o, digits + 1, k - 1);
      o += k - 1;
    }
    *o++ = 'e';
    int x = n - 1;
    *o++ = x < 0 ? '-' : '+';
    if (x < 0) x = -x;
    char reversed[4];
    int m = 0;
    do {
      reversed[m++] = static_cast<char>('0' + x % 10);
      x /= 10;
    } while (x != 0);
    while (m != 0) *o++ = reversed[--m];
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
