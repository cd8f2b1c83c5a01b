// The JSON texts of a run of Float64 values in one call: for each finite value,
// the shortest digits that read back as the same double, laid out as
// ECMAScript's Number::toString lays them out, plus ".0" on a whole value (src/json
// float text). Non-finite values get no bytes: the caller writes their names.
// Built at install by build.mjs; the JavaScript formatter is used wherever it
// is missing.
//
// The digits of a normal double come from Giulietti's Schubfach algorithm
// ("The Schubfach way to render doubles", 2020), written here from the paper,
// with tables worked out exactly at build time (pow10-table.mjs): the shortest
// decimal in the double's rounding interval, the closest of those, the even
// one on a tie, which is what Number::toString picks. Subnormals take C++17's
// std::to_chars, which gives the same digits at about three times the cost
// (native-notes.md, "Float text").
#include <node_api.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

#include "pow10-table.h"

// The longest text a double can take: "-0.00000" then 17 digits.
constexpr size_t kMaxText = 25;

constexpr int kQMin = -1074;                        // the exponent of the smallest subnormal
constexpr uint64_t kCMin = uint64_t{1} << 52;       // the hidden bit
constexpr uint64_t kLow63 = (uint64_t{1} << 63) - 1;

// "00" to "99": decimal digits two at a time.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// (g * cp) >> 127 for g = g1 * 2^63 + g0, rounded to odd: the scaled value, with its
// last bit set when anything below it was cut off.
uint64_t ScaleRoundOdd(uint64_t g1, uint64_t g0, uint64_t cp) {
  const unsigned __int128 high = static_cast<unsigned __int128>(g1) * cp;
  const uint64_t y0 = static_cast<uint64_t>(high);
  const uint64_t y1 = static_cast<uint64_t>(high >> 64);
  const uint64_t x1 = static_cast<uint64_t>((static_cast<unsigned __int128>(g0) * cp) >> 64);
  const uint64_t z = (y0 >> 1) + x1;
  return (y1 + (z >> 63)) | (((z & kLow63) + kLow63) >> 63);
}

// The shortest decimal f * 10^e that reads back as positive normal `bits`; false for a
// subnormal.
bool ShortestDecimal(uint64_t bits, uint64_t* f, int* e) {
  const int bq = static_cast<int>(bits >> 52) & 0x7ff;
  if (bq == 0) return false;
  const uint64_t c = kCMin | (bits & (kCMin - 1));
  const int q = bq + kQMin - 1;
  // A whole value below 2^53 is its own shortest decimal.
  if (-52 <= q && q < 0 && (c & ((uint64_t{1} << -q) - 1)) == 0) {
    *f = c >> -q;
    *e = 0;
    return true;
  }
  // The rounding interval [vbl, vbr] around vb, all four times the value scaled by 10^-k.
  const uint64_t odd = c & 1;  // an odd significand excludes the interval's ends
  const uint64_t cb = c << 2;
  const uint64_t cbr = cb + 2;
  const bool regular = c != kCMin;  // below a power of two the spacing is half
  const uint64_t cbl = regular ? cb - 2 : cb - 1;
  const int k = regular ? kKRegular[bq - 1] : kKIrregular[bq - 1];
  const int h = regular ? kHRegular[bq - 1] : kHIrregular[bq - 1];
  const uint64_t g1 = kG1[k - kKMin];
  const uint64_t g0 = kG0[k - kKMin];
  const uint64_t vb = ScaleRoundOdd(g1, g0, cb << h);
  const uint64_t vbl = ScaleRoundOdd(g1, g0, cbl << h);
  const uint64_t vbr = ScaleRoundOdd(g1, g0, cbr << h);
  const uint64_t s = vb >> 2;
  // One digit fewer: exactly one of the two multiples of ten around s in the interval.
  if (s >= 100) {
    const uint64_t down = s / 10 * 10;
    const uint64_t up = down + 10;
    const bool down_in = vbl + odd <= down << 2;
    const bool up_in = (up << 2) + odd <= vbr;
    if (down_in != up_in) {
      *f = down_in ? down : up;
      *e = k;
      return true;
    }
  }
  // As many digits as s: s or s + 1, whichever is in the interval, else the closer (even on a tie).
  const uint64_t t = s + 1;
  const bool s_in = vbl + odd <= s << 2;
  const bool t_in = (t << 2) + odd <= vbr;
  if (s_in != t_in) {
    *f = s_in ? s : t;
  } else {
    const int64_t cmp = static_cast<int64_t>(vb - ((s + t) << 1));
    *f = cmp < 0 || (cmp == 0 && (s & 1) == 0) ? s : t;
  }
  *e = k;
  return true;
}

// The digits of the shortest decimal of positive finite v, without trailing zeros,
// somewhere in `text`; returns where they start, and sets k, their count, and n,
// ECMAScript's exponent: v is 0.d1d2...dk x 10^n.
const char* Digits(double v, char (&text)[24], int* k, int* n) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  uint64_t f;
  int e;
  if (!ShortestDecimal(bits, &f, &e)) {
    // A subnormal: to_chars's scientific form, [d][.ddd]e-xxx.
    char sci[32];
    const std::to_chars_result res = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific);
    int count = 0;
    const char* p = sci;
    text[count++] = *p++;
    if (*p == '.') {
      for (++p; *p != 'e'; ++p) text[count++] = *p;
    }
    const bool negative = p[1] == '-';
    int x = 0;
    for (p += 2; p < res.ptr; ++p) x = x * 10 + (*p - '0');
    *n = (negative ? -x : x) + 1;
    *k = count;
    return text;
  }
  // f < 10^17: the low eight digits, then the rest (under 10^9), two at a time from the right.
  char* const end = text + sizeof text;
  char* p = end;
  uint32_t high = static_cast<uint32_t>(f);
  if (f >= 100000000) {
    uint32_t low = static_cast<uint32_t>(f % 100000000);
    high = static_cast<uint32_t>(f / 100000000);
    for (int i = 0; i < 4; ++i) {
      p -= 2;
      std::memcpy(p, kDigitPairs + 2 * (low % 100), 2);
      low /= 100;
    }
  }
  while (high >= 100) {
    p -= 2;
    std::memcpy(p, kDigitPairs + 2 * (high % 100), 2);
    high /= 100;
  }
  if (high >= 10) {
    p -= 2;
    std::memcpy(p, kDigitPairs + 2 * high, 2);
  } else {
    *--p = static_cast<char>('0' + high);
  }
  const int length = static_cast<int>(end - p);
  *n = e + length;
  int count = length;
  while (p[count - 1] == '0') --count;  // trailing zeros off (the first digit is not 0)
  *k = count;
  return p;
}

// Copies `count` bytes (at most 21): a loop, cheaper than a call of memcpy for so few.
char* Put(char* o, const char* from, int count) {
  for (int i = 0; i < count; ++i) *o++ = from[i];
  return o;
}

// `count` zeros (at most 20).
char* PutZeros(char* o, int count) {
  for (int i = 0; i < count; ++i) *o++ = '0';
  return o;
}

size_t WriteFinite(double v, char* out) {
  char* o = out;
  if (std::signbit(v)) {
    *o++ = '-';
    v = -v;
  }
  if (v == 0) {
    std::memcpy(o, "0.0", 3);
    return o + 3 - out;
  }
  char text[24];
  int k;
  int n;
  const char* digits = Digits(v, text, &k, &n);
  if (k <= n && n <= 21) {  // whole: digits, zeros, ".0"
    o = PutZeros(Put(o, digits, k), n - k);
    *o++ = '.';
    *o++ = '0';
  } else if (0 < n && n <= 21) {  // point inside the digits
    o = Put(o, digits, n);
    *o++ = '.';
    o = Put(o, digits + n, k - n);
  } else if (-6 < n && n <= 0) {  // small: "0.", zeros, digits
    *o++ = '0';
    *o++ = '.';
    o = Put(PutZeros(o, -n), digits, k);
  } else {  // exponent form: d[.ddd]e(+|-)x, the exponent without leading zeros
    *o++ = digits[0];
    if (k > 1) {
      *o++ = '.';
      o = Put(o, digits + 1, k - 1);
    }
    *o++ = 'e';
    const int x = n - 1;
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
