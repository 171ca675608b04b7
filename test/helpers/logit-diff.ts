// Max |a − b| per position over the vocabulary, for logits laid out position-major (nPos × nVocab).
export function perPositionDiff(a: Float32Array, b: Float32Array, nPos: number, nVocab: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < nPos; r++) {
    let d = 0;
    for (let i = r * nVocab; i < (r + 1) * nVocab; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
    out.push(d);
  }
  return out;
}
