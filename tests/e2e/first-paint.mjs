// Measures the web client's first paint: the server binary on a fresh SQLite file, Debian's
// Chromium, a fresh browser context per run (a cold cache), the sign-in page at phone and
// desktop size, on the loopback as it is and on an emulated "Slow 4G" link (Chrome DevTools'
// preset: 562.5 ms latency, 1.44 Mbit/s down, 675 kbit/s up). Prints the median and the range
// of first-contentful-paint, the median load event (the script has run) and the bytes that went over the wire. A measurement, not a test:
// it asserts nothing about time. Run: scripts/measure-first-paint [runs] (default 7).
import { launch, PHONE, DESKTOP, startServer } from "./harness.mjs";

const runs = Number(process.argv[2] ?? 7);
const SLOW_4G = { offline: false, latency: 562.5, downloadThroughput: (1.44e6 / 8) | 0, uploadThroughput: (675e3 / 8) | 0 };

const server = await startServer();
const browser = await launch();
try {
  for (const [link, conditions] of [
    ["loopback", null],
    ["slow 4G", SLOW_4G],
  ]) {
    for (const [size, viewport] of [
      ["phone", PHONE],
      ["desktop", DESKTOP],
    ]) {
      const paints = [];
      const loads = [];
      let bytes = 0;
      for (let i = 0; i < runs; i++) {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        const cdp = await context.newCDPSession(page);
        await cdp.send("Network.enable");
        if (conditions) await cdp.send("Network.emulateNetworkConditions", conditions);
        let wire = 0;
        cdp.on("Network.loadingFinished", (e) => (wire += e.encodedDataLength));
        await page.goto(server.base + "/", { waitUntil: "load" });
        await page.locator("#guest-name").waitFor();
        const [fcp, load] = await page.evaluate(() => [
          performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint")?.startTime ?? NaN,
          performance.getEntriesByType("navigation")[0]?.loadEventEnd ?? NaN,
        ]);
        paints.push(fcp);
        loads.push(load);
        bytes = wire;
        await context.close();
      }
      paints.sort((a, b) => a - b);
      loads.sort((a, b) => a - b);
      const median = paints[Math.floor(paints.length / 2)];
      const loaded = loads[Math.floor(loads.length / 2)];
      console.log(
        `${link.padEnd(9)} ${size.padEnd(8)} first-contentful-paint median ${median.toFixed(0)} ms ` +
          `(${paints[0].toFixed(0)}–${paints[paints.length - 1].toFixed(0)} ms, ${runs} cold runs), load event ${loaded.toFixed(0)} ms, ${bytes} B over the wire`,
      );
    }
  }
} finally {
  await browser.close();
  await server.stop();
}
