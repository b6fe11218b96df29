// The three levels of prior knowledge of the TX40 study (Brunot et al. (2018) §4.1, after Brunot
// et al. (2017) §2.3): how much the experimenter knows of the robot's dynamic bandwidth, and the
// IDIM pre-processing (position low-pass, decimation) that each level allows.
#ifndef DYNID_EXPERIMENTS_TX40_STUDY_PRIOR_KNOWLEDGE_H_
#define DYNID_EXPERIMENTS_TX40_STUDY_PRIOR_KNOWLEDGE_H_

#include <string>

#include "dynid/solvers/idim.h"

namespace dynid::experiments {

enum class PriorKnowledge { kGood, kPoor, kNone };
const char* PriorKnowledgeName(PriorKnowledge knowledge);  // "good", "poor", "none"
bool ParsePriorKnowledge(const std::string& text, PriorKnowledge* knowledge, std::string* error);

// The settings of Brunot et al. (2018) §4.1 for a knowledge level at sampling rate fs:
//   good: omega_dyn = 10 Hz, omega_q = 5 omega_dyn = 50 Hz, omega_f = 2 omega_dyn = 20 Hz;
//   poor: omega_dyn = 30 Hz, omega_q = 180 Hz, omega_f = 150 Hz;
//   none: no low-pass, no decimation.
// The decimation factor is R = round(0.8 (fs/2) / omega_f) (Decimate's anti-alias cut-off is
// 0.8 (fs/2)/R): 100 (20 Hz) and 13 (153.8 Hz) at 5 kHz. The IRW paths use the same R.
solvers::IdimPreprocessingOptions KnowledgePreprocessing(PriorKnowledge knowledge,
                                                         solvers::IdimDifferentiator differentiator,
                                                         double sample_rate_hz);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_TX40_STUDY_PRIOR_KNOWLEDGE_H_
