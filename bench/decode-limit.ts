// The decode rows' bandwidth limit, read beside every repetition from the model's own weights.
//
// NOTE(decode-limit): the shared host's read bandwidth swings from ~33 to ~63 GB/s within minutes (AMD EPYC,
// 2 threads), so a limit read before or after a row could fall below what the row itself streamed (a decode
// "share" of 117 %) or far above it. Right after each repetition's tokenmill decode the harness reads the
// weights a decode step reads (model.measureWeightReadBandwidth: the pages tokenmill's decode streams — the file's,
// or its copy repacked at load, in huge pages where the system grants them; llama.cpp streams the file's 4 KiB
// pages, which may read slower: docs/kernels.md, "The decode bandwidth limit"), and divides each side's rate in
// that repetition by the limit of that reading: readings bytes/s over the weight bytes per step. A row's share is
// the median of its per-repetition shares.
import { median } from './stats.js';
import type { TokenmillSide } from './tokenmill-side.js';

export interface DecodeLimit {
  /** Weight bytes one decode step reads (tokenmill's decode read set of the model). */
  weightBytes: number;
  /** GB/s of those weights, read after each repetition's tokenmill decode, in repetition order. */
  readingsGBs: number[];
  /** The median of the repetitions' limits, tok/s. */
  tokPerSecond: number;
  /** Per side, the median over repetitions of decode tok/s over that repetition's limit. */
  share: { tokenmill?: number; llamacpp?: number };
}

/** The readings of one decode row, one per repetition. */
export class DecodeLimitReadings {
  private readonly gbs: number[] = [];
  private weightBytes = 0;

  /** One reading of the side's model weights for repetition `rep` (call it right after that repetition's decode). */
  async take(side: TokenmillSide, rep: number): Promise<void> {
    const r = await side.readWeights();
    this.gbs[rep] = r.gbs;
    this.weightBytes = r.bytes;
  }

  /** The row's limit and shares from `values` (tok/s per side, in repetition order); undefined without readings. */
  limit(values: Map<string, number[]>): DecodeLimit | undefined {
    if (this.gbs.length === 0 || this.weightBytes === 0) return undefined;
    const limits = this.gbs.map((g) => (g * 1e9) / this.weightBytes);
    const shareOf = (name: 'tokenmill' | 'llamacpp'): number | undefined => {
      const v = values.get(name);
      if (!v || v.length === 0) return undefined;
      return median(v.map((tps, rep) => tps / limits[rep]!));
    };
    const share: DecodeLimit['share'] = {};
    const tm = shareOf('tokenmill'), ll = shareOf('llamacpp');
    if (tm !== undefined) share.tokenmill = tm;
    if (ll !== undefined) share.llamacpp = ll;
    return { weightBytes: this.weightBytes, readingsGBs: [...this.gbs], tokPerSecond: median(limits), share };
  }
}
