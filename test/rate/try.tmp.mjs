import { startLimiter } from '/work/wt/rate-control/test/rate/support/limiters.mjs';
import { runFleet, sum, cv } from '/work/wt/rate-control/test/rate/support/fleet.mjs';
import { adaptiveRate, awsAdaptiveRate } from 'ebb/rate';
const [kind='nginx', ctl='adaptive', r='50', b='5', secs='25'] = process.argv.slice(2);
const lim = await startLimiter(kind, { ratePerSecond: +r, burst: +b });
try {
  const rate = ctl === 'adaptive' ? adaptiveRate() : ctl === 'aws' ? awsAdaptiveRate() : undefined;
  const res = await runFleet({ url: lim.url, rate, clients: 40, seconds: +secs });
  console.log('ok/s', res.ok.join(' '));
  console.log('429/s', res.throttled.join(' '));
  console.log('after5 ok/s', (sum(res.ok,5,+secs)/(+secs-5)).toFixed(1), '429 share', (sum(res.throttled,5,+secs)/(sum(res.throttled,5,+secs)+sum(res.ok,5,+secs))*100).toFixed(2)+'%', 'cv', cv(res.ok,5,+secs).toFixed(3));
  console.log('outcome', JSON.stringify(res.outcome), res.logical);
  console.log('cuts', res.cuts.map(c=>`${c.t}:${c.from.toFixed(1)}->${c.to.toFixed(1)}`).join(' '));
} finally { await lim.stop(); }
