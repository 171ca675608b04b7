// A download progress line on stderr: redrawn in place on a terminal, a line per 10 % elsewhere (logs).
export function progressReporter(stream: NodeJS.WriteStream = process.stderr): (file: string, done: number, total: number) => void {
  const started = new Map<string, { t0: number; lastTenth: number; lastDraw: number }>();
  return (file, done, total) => {
    const now = performance.now();
    let s = started.get(file);
    if (!s) {
      s = { t0: now, lastTenth: -1, lastDraw: 0 };
      started.set(file, s);
    }
    const pct = total > 0 ? (done / total) * 100 : 100;
    const rate = done / Math.max((now - s.t0) / 1000, 1e-3) / 1e6;
    const text = `${file}  ${pct.toFixed(1).padStart(5)}%  ${(done / 1e6).toFixed(1)}/${(total / 1e6).toFixed(1)} MB  ${rate.toFixed(1)} MB/s`;
    if (stream.isTTY) {
      if (now - s.lastDraw < 100 && done < total) return;
      s.lastDraw = now;
      stream.write(`\r${text}${done >= total ? '\n' : ''}`);
    } else {
      const tenth = Math.floor(pct / 10);
      if (tenth === s.lastTenth) return;
      s.lastTenth = tenth;
      stream.write(`${text}\n`);
    }
  };
}
