// experiments/scara_study/scara_published — the four base parameters of the 3-DOF RRP SCARA
// (IZZ1, IZZ2, mr, m3) and the values Urrea & Agramonte (2022) publish for them (Table 7) and for
// the closed-loop tracking with each estimate (Tables 8–10).
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_PUBLISHED_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_PUBLISHED_H_

#include <array>
#include <map>
#include <string>

namespace dynid::scara_study {

inline const char* const kParamNames[4] = {"IZZ1", "IZZ2", "mr", "m3"};

// Published values (Urrea & Agramonte (2022), Tables 7–10).
struct Published {
  std::string method;
  double p[4];
};
inline const Published kPublishedTable7[] = {{"real", {4.9680, 0.6480, 1.2000, 2.0000}},
                                             {"LS", {4.7825, 0.6305, 1.1243, 1.9999}},
                                             {"HNN", {4.0126, 0.3605, 0.9774, 1.9991}},
                                             {"EKF", {4.6792, -0.9285, 1.0965, 1.9965}},
                                             {"UKF", {4.7620, 0.48600, 1.1800, 1.9968}}};
// [method][link][rmse, iae, ise]
inline const std::map<std::string, std::array<std::array<double, 3>, 3>> kPublishedTracking = {
    {"real", {{{0.1246, 0.7822, 0.4564}, {0.1059, 0.2737, 0.2842}, {0.0102, 0.0567, 0.0029}}}},
    {"LS", {{{0.1244, 0.7802, 0.4550}, {0.1071, 0.2803, 0.2917}, {0.0102, 0.0568, 0.0029}}}},
    {"HNN", {{{0.1209, 0.7701, 0.4289}, {0.0908, 0.1721, 0.1953}, {0.0102, 0.0568, 0.0029}}}},
    {"EKF", {{{0.1242, 0.7789, 0.4538}, {0.1074, 0.2818, 0.2935}, {0.0102, 0.0568, 0.0029}}}},
    {"UKF", {{{0.1229, 0.7792, 0.4442}, {0.0960, 0.2081, 0.2240}, {0.0102, 0.0568, 0.0029}}}}};

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_PUBLISHED_H_
