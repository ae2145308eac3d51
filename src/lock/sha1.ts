// SHA-1 of a script, for EVALSHA. Small and synchronous so that a plain `dlock run` does not load
// node:crypto (16 internal modules, a measurable part of start-up) just to name its scripts.
// Not for anything secret: Redis uses it as a script's name.

/** Lowercase hex SHA-1 of the UTF-8 bytes of `text`. */
export function sha1Hex(text: string): string {
  const data = new TextEncoder().encode(text);
  const words = new Uint32Array((((data.length + 8) >> 6) + 1) << 4);
  for (let i = 0; i < data.length; i++) words[i >> 2] |= data[i] << (24 - (i & 3) * 8);
  words[data.length >> 2] |= 0x80 << (24 - (data.length & 3) * 8);
  words[words.length - 1] = data.length * 8;
  words[words.length - 2] = Math.floor((data.length * 8) / 2 ** 32);
  let [a, b, c, d, e] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Uint32Array(80);
  for (let block = 0; block < words.length; block += 16) {
    for (let t = 0; t < 80; t++) {
      w[t] = t < 16 ? words[block + t] : rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    }
    let [h0, h1, h2, h3, h4] = [a, b, c, d, e];
    for (let t = 0; t < 80; t++) {
      const f = t < 20 ? (h1 & h2) | (~h1 & h3) : t < 40 ? h1 ^ h2 ^ h3 : t < 60 ? (h1 & h2) | (h1 & h3) | (h2 & h3) : h1 ^ h2 ^ h3;
      const k = t < 20 ? 0x5a827999 : t < 40 ? 0x6ed9eba1 : t < 60 ? 0x8f1bbcdc : 0xca62c1d6;
      const next = (rotl(h0, 5) + f + h4 + k + w[t]) >>> 0;
      [h0, h1, h2, h3, h4] = [next, h0, rotl(h1, 30), h2, h3];
    }
    [a, b, c, d, e] = [(a + h0) >>> 0, (b + h1) >>> 0, (c + h2) >>> 0, (d + h3) >>> 0, (e + h4) >>> 0];
  }
  return [a, b, c, d, e].map((x) => x.toString(16).padStart(8, '0')).join('');
}

function rotl(x: number, n: number): number {
  return ((x << n) | (x >>> (32 - n))) >>> 0;
}
