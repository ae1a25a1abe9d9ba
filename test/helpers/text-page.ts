import sharp from 'sharp';

/**
 * A photographed page of text, made here rather than taken from a package: lines of words in
 * DejaVu Serif (fonts-dejavu, a free licence: Bitstream Vera's terms and public domain changes)
 * running off every edge, dark ink on paper lit unevenly from one side. Pictures under 256 px on a
 * side, as skimage's page and text are, are what the fingerprints' sample enlarges (luma.ts).
 * Shared by the robust-hash tests and bench/small-turns.ts, where such pages are the text-like
 * pictures of the tuning side.
 */
const WORDS =
  'the quick brown fox jumps over a lazy dog pack my box with five dozen liquor jugs sphinx of black quartz judge vow how vexingly daft zebras jump'.split(' ');

export async function textPage(width: number, height: number, seed: number): Promise<Buffer> {
  let state = seed;
  const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
  const text = Array.from({ length: 80 }, () => Array.from({ length: 14 }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')).join('\n');
  // The rendered text is white on black: channel 0 is the ink's coverage.
  const ink = await sharp(
    await sharp({ text: { text, font: 'DejaVu Serif', width: width * 2, dpi: 72 } })
      .png()
      .toBuffer(),
  )
    .extractChannel(0)
    .extract({ left: 0, top: 0, width, height })
    .raw()
    .toBuffer();
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const paper = 200 + (40 * x) / width - (20 * y) / height;
      pixels.fill(Math.round(paper * (1 - ink[y * width + x] / 300)), (y * width + x) * 3, (y * width + x) * 3 + 3);
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}
