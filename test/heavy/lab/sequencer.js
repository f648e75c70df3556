/**
 * The order in which test/heavy/lab/run.sh's two jest workers take the lab files: the longest first, so that the last file
 * to start is a short one and the two workers end close together. Files not listed follow, largest first (jest's own
 * rule on a clean clone, which has no recorded durations).
 */
const Sequencer = require('@jest/test-sequencer').default;
const path = require('path');

/** Lab files, longest first: minutes on two shared cores, from the lab's own logs. */
const LONGEST_FIRST = ['scenarios.lab.ts', 'aws.lab.ts', 'mirror.lab.ts', 'kernels.lab.ts', 'cms.lab.ts'];

class LabSequencer extends Sequencer {
  sort(tests) {
    const rank = (t) => {
      const i = LONGEST_FIRST.indexOf(path.basename(t.path));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    const bySize = super.sort(tests);
    return bySize.slice().sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LabSequencer;
