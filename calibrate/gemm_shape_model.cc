#include "calibrate/gemm_shape_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

struct Row {
  double m, n, k, log_flop_time;  // ln(2mnk / peak) − ln(measured time)
};

// r_i = ln(model compute time / measured) = lft_i − ln g + ln((k+k0)/k) + ln((mn+c)/mn)
Eigen::VectorXd Residuals(const std::vector<Row>& rows, const Eigen::Vector3d& th) {
  const double g = std::exp(th(0)), k0 = std::exp(th(1)), c = std::exp(th(2));
  Eigen::VectorXd r(static_cast<Eigen::Index>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& x = rows[i];
    r(static_cast<Eigen::Index>(i)) =
        x.log_flop_time - std::log(g) + std::log((x.k + k0) / x.k) + std::log((x.m * x.n + c) / (x.m * x.n));
  }
  return r;
}

Eigen::MatrixXd Jacobian(const std::vector<Row>& rows, const Eigen::Vector3d& th) {
  const double k0 = std::exp(th(1)), c = std::exp(th(2));
  Eigen::MatrixXd j(static_cast<Eigen::Index>(rows.size()), 3);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& x = rows[i];
    const auto e = static_cast<Eigen::Index>(i);
    j(e, 0) = -1.0;
    j(e, 1) = k0 / (x.k + k0);
    j(e, 2) = c / (x.m * x.n + c);
  }
  return j;
}

}  // namespace

double ShapeModelEfficiency(const GemmShapeParams& p, double m, double n, double k) {
  return p.g * k / (k + p.k0) * (m * n) / (m * n + p.c_mn);
}

double ShapeModelSeconds(const GemmShapeParams& p, const GpuProfile& gpu, const GemmSample& s) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  const double compute = 2.0 * m * n * k / (gpu.bf16_dense.si() * ShapeModelEfficiency(p, m, n, k));
  const double memory = 2.0 * (m * k + k * n + m * n) / (gpu.hbm_bandwidth.si() * gpu.memory_efficiency);
  return std::max(compute, memory);
}

GemmShapeFit FitGemmShapeModel(const std::vector<GemmSample>& samples, const GpuProfile& gpu,
                               const GemmShapeParams& start, Seconds min_time) {
  GemmShapeFit fit;
  FitSummary& s = fit.summary;
  std::vector<Row> rows;
  for (const auto& x : samples) {
    if (x.time.si() <= 0 || x.time < min_time) continue;
    const double m = static_cast<double>(x.m), n = static_cast<double>(x.n), k = static_cast<double>(x.k);
    rows.push_back({m, n, k, std::log(2.0 * m * n * k / gpu.bf16_dense.si()) - std::log(x.time.si())});
  }
  if (rows.size() < 6 || gpu.bf16_dense.si() <= 0) {
    s.status = FitStatus::kInsufficientData;
    s.message = StrCat("need at least 6 GEMMs of varied shape, have ", rows.size());
    return fit;
  }
  // Levenberg–Marquardt (Marquardt's diagonal scaling) in log parameters.
  Eigen::Vector3d th(std::log(start.g), std::log(start.k0), std::log(start.c_mn));
  Eigen::VectorXd r = Residuals(rows, th);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  int it = 0;
  bool converged = false;
  for (; it < 200 && !converged; ++it) {
    const Eigen::MatrixXd j = Jacobian(rows, th);
    const Eigen::Matrix3d jtj = j.transpose() * j;
    const Eigen::Vector3d grad = j.transpose() * r;
    bool stepped = false;
    while (lambda < 1e12) {
      Eigen::Matrix3d a = jtj;
      a.diagonal() += lambda * jtj.diagonal().cwiseMax(1e-12);
      const Eigen::Vector3d step = a.ldlt().solve(-grad);
      const Eigen::Vector3d trial = th + step;
      const Eigen::VectorXd rt = Residuals(rows, trial);
      const double ct = rt.squaredNorm();
      if (std::isfinite(ct) && ct < cost) {
        converged = step.norm() < 1e-10 || (cost - ct) < 1e-14 * cost;
        th = trial;
        r = rt;
        cost = ct;
        lambda = std::max(lambda / 10, 1e-12);
        stepped = true;
        break;
      }
      lambda *= 10;
    }
    if (!stepped) converged = true;  // no descent direction left: at a minimum
  }
  s.iterations = it;
  fit.params = {std::exp(th(0)), std::exp(th(1)), std::exp(th(2))};
  // Identifiability: J'J singular means k0 or c is not pinned by the shapes.
  const Eigen::MatrixXd j = Jacobian(rows, th);
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(j);
  const double cond = svd.singularValues()(0) / svd.singularValues()(2);

  double sq = 0;
  std::map<int, std::pair<double, int>> by_tp;
  for (const auto& x : samples) {
    if (x.time.si() <= 0 || x.time < min_time) continue;
    const double e = ShapeModelSeconds(fit.params, gpu, x) / x.time.si() - 1.0;
    sq += e * e;
    by_tp[x.tp].first += e * e;
    by_tp[x.tp].second += 1;
  }
  for (const auto& [tp, acc] : by_tp) fit.rms_by_tp[tp] = std::sqrt(acc.first / acc.second);
  s.rms_rel_error = std::sqrt(sq / static_cast<double>(rows.size()));
  if (!converged || !std::isfinite(cond) || cond > 1e8) {
    s.status = FitStatus::kIllConditioned;
    s.message = StrCat("the shapes do not pin k0 and c (condition ", cond, ", ", it, " iterations)");
    return fit;
  }
  if (fit.params.g > 1.0) {
    s.status = FitStatus::kPoorFit;
    s.message = StrCat("best-shape efficiency ", fit.params.g, " > 1: faster than the profile's peak");
    return fit;
  }
  s.status = s.rms_rel_error > 0.15 ? FitStatus::kPoorFit : FitStatus::kConverged;
  s.message = StrCat(rows.size(), " GEMMs: g ", fit.params.g, ", k0 ", fit.params.k0, ", c ", fit.params.c_mn,
                     ", rms relative time error ", s.rms_rel_error);
  return fit;
}

}  // namespace parasim::calibrate
