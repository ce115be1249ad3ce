// Loads a report page in headless Chromium (driven by playwright-core) and prints what a reader would
// meet as one JSON line: console errors, network requests, the charts' sizes, the page's text figures,
// and how much of a screenshot of each chart is not background. Arguments: the playwright-core
// directory, the Chromium executable, the page's file URL, the screenshot path.
'use strict';

const [playwrightDir, executablePath, pageUrl, screenshotPath] = process.argv.slice(2);
const { chromium } = require(playwrightDir);

// Share of non-white pixels of a PNG, decoded by the browser itself on a blank page.
async function inkShare(browser, png) {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const context = canvas.getContext('2d');
      context.drawImage(img, 0, 0);
      const data = context.getImageData(0, 0, img.width, img.height).data;
      let ink = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] < 235 || data[i + 1] < 235 || data[i + 2] < 235) ink += 1;
      }
      return { width: img.width, height: img.height, ink: ink / (data.length / 4) };
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

(async () => {
  const browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const consoleMessages = [];
    const requests = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') consoleMessages.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => consoleMessages.push(`pageerror: ${e}`));
    page.on('request', (r) => {
      if (r.url() !== pageUrl) requests.push(r.url());
    });
    await page.goto(pageUrl, { waitUntil: 'load' });
    // anything the page would fetch late
    await page.waitForTimeout(500);
    const charts = await page.$$eval('svg.chart', (svgs) =>
      svgs.map((svg) => {
        const box = svg.getBoundingClientRect();
        return {
          width: box.width,
          height: box.height,
          bars: svg.querySelectorAll('rect').length,
          title: svg.querySelector('title') ? svg.querySelector('title').textContent : '',
        };
      }),
    );
    const chartInk = [];
    for (const chart of await page.locator('svg.chart').all()) {
      chartInk.push(await inkShare(browser, await chart.screenshot()));
    }
    const shot = await page.screenshot({ path: screenshotPath, fullPage: true });
    const pageInk = await inkShare(browser, shot);
    const figures = {
      sha256: await page.textContent('#dataset-sha256'),
      k: await page.textContent('#achieved-k'),
      headings: await page.$$eval('h2', (hs) => hs.map((h) => h.textContent)),
      captions: await page.$$eval('table', (ts) => ts.filter((t) => !t.querySelector('caption')).length),
      lang: await page.getAttribute('html', 'lang'),
    };
    console.log(JSON.stringify({ consoleMessages, requests, charts, chartInk, pageInk, figures }));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
