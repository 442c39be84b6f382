//! A small rasteriser for `--poster FILE.png`: an RGB canvas with the few
//! primitives the poster draws (anti-aliased lines with round caps, filled
//! and stroked circles, filled polygons, text in a built-in 5×7 bitmap
//! font), and a PNG encoder (8-bit RGB, zlib stream of fixed-Huffman
//! deflate blocks with run-length matches). No dependency: the cold build
//! stays where it was (README, section Animation).

/// An sRGB colour.
pub type Rgb = [u8; 3];

/// `#rrggbb` as a colour (black for anything else: the callers pass
/// constants).
pub fn rgb(hex: &str) -> Rgb {
    let h = hex.trim_start_matches('#');
    let byte = |i: usize| {
        h.get(i..i + 2)
            .and_then(|s| u8::from_str_radix(s, 16).ok())
            .unwrap_or(0)
    };
    [byte(0), byte(2), byte(4)]
}

/// Where text is anchored horizontally (SVG's `text-anchor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The text starts at `x`.
    Start,
    /// The text is centred on `x`.
    Middle,
    /// The text ends at `x`.
    End,
}

/// How text is set: its size (px), anchor, weight and colour.
#[derive(Debug, Clone, Copy)]
pub struct TextStyle {
    /// About the height of a capital (px); the glyphs' 7-pixel cells are
    /// scaled by the nearest whole factor.
    pub size: f64,
    /// Where `x` is along the text.
    pub anchor: Anchor,
    /// Strokes doubled.
    pub bold: bool,
    /// Colour.
    pub color: Rgb,
}

/// An RGB image being drawn, with a clip rectangle.
pub struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
    /// `[x0, y0, x1, y1]` (px): nothing is drawn outside.
    clip: [f64; 4],
}

impl Canvas {
    /// A white canvas of `width` × `height` px.
    pub fn new(width: usize, height: usize) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![255; width * height * 3],
            clip: [0.0, 0.0, width as f64, height as f64],
        }
    }

    /// Draw only inside `[x0, x0 + w] × [y0, y0 + h]` (px) from now on;
    /// `None`: the whole canvas.
    pub fn clip(&mut self, rect: Option<[f64; 4]>) {
        let full = [0.0, 0.0, self.width as f64, self.height as f64];
        self.clip = match rect {
            Some([x, y, w, h]) => [
                x.max(0.0),
                y.max(0.0),
                (x + w).min(full[2]),
                (y + h).min(full[3]),
            ],
            None => full,
        };
    }

    /// The pixel rows and columns a box `[x0, x1] × [y0, y1]` touches, within
    /// the clip; `None` when it is outside.
    fn span(&self, x0: f64, x1: f64, y0: f64, y1: f64) -> Option<(usize, usize, usize, usize)> {
        let c = &self.clip;
        let (x0, x1) = (x0.max(c[0]).floor(), x1.min(c[2]).ceil());
        let (y0, y1) = (y0.max(c[1]).floor(), y1.min(c[3]).ceil());
        // Also false for NaN.
        if !(x0 < x1 && y0 < y1) {
            return None;
        }
        Some((x0 as usize, x1 as usize, y0 as usize, y1 as usize))
    }

    /// Blend `color` with opacity `alpha` (0–1) over pixel `(x, y)`.
    fn blend(&mut self, x: usize, y: usize, color: Rgb, alpha: f64) {
        if alpha <= 0.0 || x >= self.width || y >= self.height {
            return;
        }
        let a = alpha.min(1.0);
        let i = 3 * (y * self.width + x);
        for (k, &c) in color.iter().enumerate() {
            let old = f64::from(self.pixels[i + k]);
            self.pixels[i + k] = (old + a * (f64::from(c) - old)).round() as u8;
        }
    }

    /// Paint every pixel of the box whose centre's coverage `cover(x, y)`
    /// (0–1) is positive.
    fn paint(&mut self, bbox: [f64; 4], color: Rgb, alpha: f64, cover: impl Fn(f64, f64) -> f64) {
        let Some((x0, x1, y0, y1)) = self.span(bbox[0], bbox[1], bbox[2], bbox[3]) else {
            return;
        };
        for y in y0..y1 {
            for x in x0..x1 {
                let c = cover(x as f64 + 0.5, y as f64 + 0.5);
                if c > 0.0 {
                    self.blend(x, y, color, alpha * c.min(1.0));
                }
            }
        }
    }

    /// A segment from `a` to `b` (px), `width` px wide with round caps,
    /// anti-aliased.
    pub fn line(&mut self, a: [f64; 2], b: [f64; 2], width: f64, color: Rgb, alpha: f64) {
        let r = 0.5 * width;
        let Some([a, b]) = self.clip_segment(a, b, r + 1.0) else {
            return;
        };
        let d = [b[0] - a[0], b[1] - a[1]];
        let len2 = d[0] * d[0] + d[1] * d[1];
        let bbox = [
            a[0].min(b[0]) - r - 1.0,
            a[0].max(b[0]) + r + 1.0,
            a[1].min(b[1]) - r - 1.0,
            a[1].max(b[1]) + r + 1.0,
        ];
        self.paint(bbox, color, alpha, |x, y| {
            let s = if len2 > 0.0 {
                (((x - a[0]) * d[0] + (y - a[1]) * d[1]) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let dist = (x - a[0] - s * d[0]).hypot(y - a[1] - s * d[1]);
            (r + 0.5 - dist).clamp(0.0, 1.0)
        });
    }

    /// The part of segment `a`–`b` within the clip grown by `margin` px
    /// (Liang–Barsky), so that a line across the whole plane is drawn
    /// only where it shows.
    fn clip_segment(&self, a: [f64; 2], b: [f64; 2], margin: f64) -> Option<[[f64; 2]; 2]> {
        let c = &self.clip;
        let d = [b[0] - a[0], b[1] - a[1]];
        let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
        for (p, q) in [
            (-d[0], a[0] - (c[0] - margin)),
            (d[0], (c[2] + margin) - a[0]),
            (-d[1], a[1] - (c[1] - margin)),
            (d[1], (c[3] + margin) - a[1]),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    t0 = t0.max(t);
                } else {
                    t1 = t1.min(t);
                }
            }
        }
        (t0 <= t1).then(|| {
            [
                [a[0] + t0 * d[0], a[1] + t0 * d[1]],
                [a[0] + t1 * d[0], a[1] + t1 * d[1]],
            ]
        })
    }

    /// A disc of radius `r` (px) centred at `c`, anti-aliased.
    pub fn fill_circle(&mut self, c: [f64; 2], r: f64, color: Rgb, alpha: f64) {
        let bbox = [
            c[0] - r - 1.0,
            c[0] + r + 1.0,
            c[1] - r - 1.0,
            c[1] + r + 1.0,
        ];
        self.paint(bbox, color, alpha, |x, y| {
            (r + 0.5 - (x - c[0]).hypot(y - c[1])).clamp(0.0, 1.0)
        });
    }

    /// A circle of radius `r` (px) centred at `c`, its outline `width` px
    /// wide, anti-aliased.
    pub fn stroke_circle(&mut self, c: [f64; 2], r: f64, width: f64, color: Rgb) {
        let w = 0.5 * width;
        let bbox = [
            c[0] - r - w - 1.0,
            c[0] + r + w + 1.0,
            c[1] - r - w - 1.0,
            c[1] + r + w + 1.0,
        ];
        self.paint(bbox, color, 1.0, |x, y| {
            (w + 0.5 - ((x - c[0]).hypot(y - c[1]) - r).abs()).clamp(0.0, 1.0)
        });
    }

    /// A polygon (px) filled by the even–odd rule at pixel centres.
    pub fn fill_polygon(&mut self, points: &[[f64; 2]], color: Rgb, alpha: f64) {
        if points.len() < 3 {
            return;
        }
        let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in points {
            y_lo = y_lo.min(p[1]);
            y_hi = y_hi.max(p[1]);
        }
        let Some((x0, x1, y0, y1)) = self.span(self.clip[0], self.clip[2], y_lo, y_hi) else {
            return;
        };
        let mut crossings = Vec::new();
        for y in y0..y1 {
            let yc = y as f64 + 0.5;
            crossings.clear();
            for (k, a) in points.iter().enumerate() {
                let b = points[(k + 1) % points.len()];
                if (a[1] <= yc) != (b[1] <= yc) {
                    crossings.push(a[0] + (yc - a[1]) / (b[1] - a[1]) * (b[0] - a[0]));
                }
            }
            crossings.sort_by(f64::total_cmp);
            for pair in crossings.chunks_exact(2) {
                let from = (pair[0] - 0.5).ceil().max(x0 as f64) as usize;
                let to = ((pair[1] - 0.5).floor() + 1.0).min(x1 as f64);
                for x in from..to.max(0.0) as usize {
                    self.blend(x, y, color, alpha);
                }
            }
        }
    }

    /// `s` in the built-in font as `style` says, its baseline at `y`,
    /// anchored at `x`. Characters the font lacks are drawn as `?` (`…` as
    /// `...`).
    pub fn text(&mut self, [x, y]: [f64; 2], s: &str, style: TextStyle) {
        let TextStyle {
            size,
            anchor,
            bold,
            color,
        } = style;
        let (scale, glyphs) = layout(size, s);
        let advance = (GLYPH_W + 1) as f64 * scale;
        let width = glyphs.len() as f64 * advance - scale;
        let x0 = match anchor {
            Anchor::Start => x,
            Anchor::Middle => x - 0.5 * width,
            Anchor::End => x - width,
        }
        .round();
        for (k, rows) in glyphs.iter().enumerate() {
            let gx = x0 + k as f64 * advance;
            self.glyph(rows, scale, bold, color, |col, row| {
                [gx + col * scale, y.round() + (row - GLYPH_H as f64) * scale]
            });
        }
    }

    /// `text` as [`Canvas::text`], turned a quarter left (read bottom to
    /// top), centred on `(x, y)` along its length, its baseline at `x`.
    pub fn text_up(&mut self, x: f64, y: f64, size: f64, s: &str, color: Rgb) {
        let (scale, glyphs) = layout(size, s);
        let advance = (GLYPH_W + 1) as f64 * scale;
        let length = glyphs.len() as f64 * advance - scale;
        let y0 = (y + 0.5 * length).round();
        for (k, rows) in glyphs.iter().enumerate() {
            let gy = y0 - k as f64 * advance;
            // Glyph column → up the page, glyph row → rightwards.
            self.glyph(rows, scale, false, color, |col, row| {
                [
                    x.round() + (row - GLYPH_H as f64) * scale,
                    gy - (col + 1.0) * scale,
                ]
            });
        }
    }

    /// Draw one glyph's set cells, each a `scale` × `scale` square whose
    /// top-left corner `at(column, row)` places.
    fn glyph(
        &mut self,
        rows: &[u8],
        scale: f64,
        bold: bool,
        color: Rgb,
        at: impl Fn(f64, f64) -> [f64; 2],
    ) {
        let s = scale.max(1.0) as usize;
        for (row, bits) in rows.iter().enumerate() {
            for col in 0..GLYPH_W {
                let on = bits & (1 << (GLYPH_W - 1 - col)) != 0
                    || (bold && col > 0 && bits & (1 << (GLYPH_W - col)) != 0);
                if !on {
                    continue;
                }
                let [px, py] = at(col as f64, row as f64);
                let [px, py] = [px.round(), py.round()];
                if px < self.clip[0] || py < self.clip[1] {
                    continue;
                }
                for dy in 0..s {
                    for dx in 0..s {
                        self.blend(px as usize + dx, py as usize + dy, color, 1.0);
                    }
                }
            }
        }
    }

    /// The image as a PNG file (8-bit RGB, not interlaced).
    pub fn png(&self) -> Vec<u8> {
        let stride = 3 * self.width;
        let mut raw = Vec::with_capacity(self.height * (stride + 1));
        for row in self.pixels.chunks_exact(stride.max(1)) {
            raw.push(0); // filter: none
            raw.extend_from_slice(row);
        }
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut header = Vec::with_capacity(13);
        header.extend_from_slice(&(self.width as u32).to_be_bytes());
        header.extend_from_slice(&(self.height as u32).to_be_bytes());
        // 8 bits, colour type 2 (RGB), deflate, adaptive filters, no interlace.
        header.extend_from_slice(&[8, 2, 0, 0, 0]);
        chunk(&mut out, b"IHDR", &header);
        chunk(&mut out, b"IDAT", &zlib(&raw, &[3, stride + 1]));
        chunk(&mut out, b"IEND", &[]);
        out
    }
}

/// Width and height of a glyph's cell (px at scale 1, above the baseline).
const GLYPH_W: usize = 5;
const GLYPH_H: usize = 7;

/// The whole-number scale for `size` px text, and the glyph rows of `s`.
fn layout(size: f64, s: &str) -> (f64, Vec<Vec<u8>>) {
    let scale = (size / 8.0).round().max(1.0);
    let glyphs = s
        .chars()
        .flat_map(|c| match c {
            '…' => vec!['.'; 3],
            ' '..='~' => vec![c],
            _ => vec!['?'],
        })
        .map(glyph_rows)
        .collect();
    (scale, glyphs)
}

/// The rows of the glyph of a printable ASCII character (bit 4 the left
/// column), seven above the baseline, up to two below.
fn glyph_rows(c: char) -> Vec<u8> {
    let index = (c as usize).saturating_sub(32).min(FONT.len() - 1);
    FONT[index]
        .split(' ')
        .map(|row| {
            row.bytes()
                .fold(0u8, |bits, b| (bits << 1) | u8::from(b == b'#'))
        })
        .collect()
}

/// A 5×7 font of the printable ASCII characters (space to `~`), drawn for
/// this program: rows top to bottom, `#` set; rows after the seventh hang
/// below the baseline (descenders).
const FONT: [&str; 95] = [
    "..... ..... ..... ..... ..... ..... .....",
    "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    ".#.#. .#.#. ..... ..... ..... ..... .....",
    ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.",
    "..#.. .#### #.#.. .###. ..#.# ####. ..#..",
    "##... ##..# ...#. ..#.. .#... #..## ...##",
    ".##.. #..#. #.#.. .#... #.#.# #..#. .##.#",
    "..#.. ..#.. ..... ..... ..... ..... .....",
    "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
    "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "..... ..... ..... ..... ..... .##.. ..#.. .#...",
    "..... ..... ..... ##### ..... ..... .....",
    "..... ..... ..... ..... ..... .##.. .##..",
    "..... ....# ...#. ..#.. .#... #.... .....",
    ".###. #...# #..## #.#.# ##..# #...# .###.",
    "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    ".###. #...# ....# ...#. ..#.. .#... #####",
    "##### ...#. ..#.. ...#. ....# #...# .###.",
    "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "##### #.... ####. ....# ....# #...# .###.",
    "..##. .#... #.... ####. #...# #...# .###.",
    "##### ....# ...#. ..#.. .#... .#... .#...",
    ".###. #...# #...# .###. #...# #...# .###.",
    ".###. #...# #...# .#### ....# ...#. .##..",
    "..... .##.. .##.. ..... .##.. .##.. .....",
    "..... .##.. .##.. ..... .##.. .##.. ..#.. .#...",
    "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    "..... ..... ##### ..... ##### ..... .....",
    ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    ".###. #...# ....# ...#. ..#.. ..... ..#..",
    ".###. #...# ....# .##.# #.#.# #.#.# .###.",
    ".###. #...# #...# ##### #...# #...# #...#",
    "####. #...# #...# ####. #...# #...# ####.",
    ".###. #...# #.... #.... #.... #...# .###.",
    "###.. #..#. #...# #...# #...# #..#. ###..",
    "##### #.... #.... ####. #.... #.... #####",
    "##### #.... #.... ####. #.... #.... #....",
    ".###. #...# #.... #.### #...# #...# .####",
    "#...# #...# #...# ##### #...# #...# #...#",
    ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "#.... #.... #.... #.... #.... #.... #####",
    "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "#...# #...# ##..# #.#.# #..## #...# #...#",
    ".###. #...# #...# #...# #...# #...# .###.",
    "####. #...# #...# ####. #.... #.... #....",
    ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "####. #...# #...# ####. #.#.. #..#. #...#",
    ".#### #.... #.... .###. ....# ....# ####.",
    "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "#...# #...# #...# #...# #...# #...# .###.",
    "#...# #...# #...# #...# #...# .#.#. ..#..",
    "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "##### ....# ...#. ..#.. .#... #.... #####",
    ".###. .#... .#... .#... .#... .#... .###.",
    "..... #.... .#... ..#.. ...#. ....# .....",
    ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "..#.. .#.#. #...# ..... ..... ..... .....",
    "..... ..... ..... ..... ..... ..... #####",
    ".#... ..#.. ..... ..... ..... ..... .....",
    "..... ..... .###. ....# .#### #...# .####",
    "#.... #.... #.##. ##..# #...# #...# ####.",
    "..... ..... .###. #.... #.... #...# .###.",
    "....# ....# .##.# #..## #...# #...# .####",
    "..... ..... .###. #...# ##### #.... .###.",
    "..##. .#..# .#... ###.. .#... .#... .#...",
    "..... ..... .#### #...# #...# #...# .#### ....# .###.",
    "#.... #.... #.##. ##..# #...# #...# #...#",
    "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
    "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..",
    "#.... #.... #..#. #.#.. ##... #.#.. #..#.",
    ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "..... ..... ##.#. #.#.# #.#.# #...# #...#",
    "..... ..... #.##. ##..# #...# #...# #...#",
    "..... ..... .###. #...# #...# #...# .###.",
    "..... ..... ####. #...# #...# #...# ####. #.... #....",
    "..... ..... .#### #...# #...# #...# .#### ....# ....#",
    "..... ..... #.##. ##..# #.... #.... #....",
    "..... ..... .#### #.... .###. ....# ####.",
    ".#... .#... ###.. .#... .#... .#..# ..##.",
    "..... ..... #...# #...# #...# #..## .##.#",
    "..... ..... #...# #...# #...# .#.#. ..#..",
    "..... ..... #...# #...# #.#.# #.#.# .#.#.",
    "..... ..... #...# .#.#. ..#.. .#.#. #...#",
    "..... ..... #...# #...# #...# #...# .#### ....# .###.",
    "..... ..... ##### ...#. ..#.. .#... #####",
    "...#. ..#.. ..#.. .#... ..#.. ..#.. ...#.",
    "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    ".#... ..#.. ..#.. ...#. ..#.. ..#.. .#...",
    "..... ..... .#... #.#.# ...#. ..... .....",
];

/// Append a PNG chunk: length, type, data, CRC-32 of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// CRC-32 (ISO 3309, as PNG uses it), bit by bit: a poster's few hundred
/// kilobytes take a few milliseconds.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Adler-32 of `data` (the zlib trailer).
fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

/// Bits written least significant first (deflate's order).
struct BitWriter {
    out: Vec<u8>,
    buffer: u64,
    count: u32,
}

impl BitWriter {
    fn put(&mut self, value: u32, bits: u32) {
        self.buffer |= u64::from(value) << self.count;
        self.count += bits;
        while self.count >= 8 {
            self.out.push(self.buffer as u8);
            self.buffer >>= 8;
            self.count -= 8;
        }
    }

    /// A Huffman code of `bits` bits, most significant bit first.
    fn code(&mut self, code: u32, bits: u32) {
        self.put(code.reverse_bits() >> (32 - bits), bits);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.count > 0 {
            self.out.push(self.buffer as u8);
        }
        self.out
    }
}

/// Write a literal/length symbol with the fixed Huffman code (RFC 1951
/// §3.2.6).
fn fixed_symbol(w: &mut BitWriter, symbol: u32) {
    match symbol {
        0..=143 => w.code(0x30 + symbol, 8),
        144..=255 => w.code(0x190 + symbol - 144, 9),
        256..=279 => w.code(symbol - 256, 7),
        _ => w.code(0xC0 + symbol - 280, 8),
    }
}

/// The base value and extra bits of the deflate codes for lengths 3–258
/// (symbols 257–285) and distances 1–32768 (codes 0–29).
const LENGTH_BASE: [u32; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u32; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DISTANCE_BASE: [u32; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA: [u32; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// The index of the last base not above `value`.
fn code_of(bases: &[u32], value: u32) -> usize {
    bases.partition_point(|&b| b <= value) - 1
}

/// `data` as a zlib stream (RFC 1950) of one fixed-Huffman deflate block
/// whose matches are copies from `distances` bytes back (for a PNG: the
/// pixel to the left and the one above), the longest taken.
fn zlib(data: &[u8], distances: &[usize]) -> Vec<u8> {
    let mut w = BitWriter {
        out: vec![0x78, 0x01],
        buffer: 0,
        count: 0,
    };
    // One final block, fixed codes.
    w.put(1, 1);
    w.put(1, 2);
    let mut i = 0;
    while i < data.len() {
        let best = distances
            .iter()
            .filter(|&&d| d > 0 && d <= i && d <= 32768)
            .map(|&d| {
                let max = (data.len() - i).min(258);
                let len = (0..max)
                    .take_while(|&k| data[i + k] == data[i + k - d])
                    .count();
                (len, d)
            })
            .max();
        match best {
            Some((len, d)) if len >= 3 => {
                let (len32, d32) = (len as u32, d as u32);
                let l = code_of(&LENGTH_BASE, len32);
                fixed_symbol(&mut w, 257 + l as u32);
                w.put(len32 - LENGTH_BASE[l], LENGTH_EXTRA[l]);
                let c = code_of(&DISTANCE_BASE, d32);
                w.code(c as u32, 5);
                w.put(d32 - DISTANCE_BASE[c], DISTANCE_EXTRA[c]);
                i += len;
            }
            _ => {
                fixed_symbol(&mut w, u32::from(data[i]));
                i += 1;
            }
        }
    }
    fixed_symbol(&mut w, 256);
    let mut out = w.finish();
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}
