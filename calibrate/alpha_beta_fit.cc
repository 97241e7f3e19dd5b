#include "calibrate/alpha_beta_fit.h"

#include <Eigen/Dense>
#include <cmath>
#include <set>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

double RmsRel(const std::vector<SizeTime>& pts, double alpha, double inv_beta) {
  double sum = 0;
  for (const auto& p : pts) {
    const double r = (alpha + p.size.si() * inv_beta - p.time.si()) / p.time.si();
    sum += r * r;
  }
  return std::sqrt(sum / static_cast<double>(pts.size()));
}

}  // namespace

AlphaBetaFit FitAlphaBeta(const std::vector<SizeTime>& all, const AlphaBetaOptions& options) {
  AlphaBetaFit fit;
  std::vector<SizeTime> pts;
  std::set<double> sizes;
  for (const auto& p : all) {
    if (p.size.si() <= 0 || p.time.si() <= 0 || !std::isfinite(p.time.si())) continue;
    if (p.size < options.min_size || p.size > options.max_size) continue;
    pts.push_back(p);
    sizes.insert(p.size.si());
  }
  fit.points = static_cast<int>(pts.size());
  FitSummary& s = fit.summary;
  if (sizes.size() < 2) {
    s.status = FitStatus::kInsufficientData;
    s.message = StrCat("need rows at two or more distinct sizes in the window, have ", sizes.size());
    return fit;
  }
  // Relative residuals: row i is [1/t_i, S_i/t_i] · [α, 1/β] ≈ 1.
  const Eigen::Index n = static_cast<Eigen::Index>(pts.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  // Columns scaled to unit norm so the solve and the condition number do not
  // depend on the units (seconds vs bytes differ by ~1e15).
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, 0) = 1.0 / pts[i].time.si();
    a(i, 1) = pts[i].size.si() / pts[i].time.si();
  }
  const Eigen::Vector2d scale(a.col(0).norm(), a.col(1).norm());
  const Eigen::MatrixXd as = a * scale.cwiseInverse().asDiagonal();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(as, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const double cond = svd.singularValues()(0) / svd.singularValues()(1);
  s.iterations = 1;
  if (!std::isfinite(cond) || cond > 1e8) {
    s.status = FitStatus::kIllConditioned;
    s.message = StrCat("sizes do not separate latency from bandwidth (condition number ", cond, ")");
    return fit;
  }
  const Eigen::Vector2d x = svd.solve(b).cwiseQuotient(scale);
  double alpha = x(0), inv_beta = x(1);
  std::string note;
  if (alpha < 0) {  // through the origin: minimize Σ(S_i/t_i · x − 1)²
    double num = 0, den = 0;
    for (const auto& p : pts) {
      const double q = p.size.si() / p.time.si();
      num += q;
      den += q * q;
    }
    alpha = 0;
    inv_beta = num / den;
    note = "; the unconstrained latency was negative, so α is fixed at 0";
  }
  if (!(inv_beta > 0)) {
    s.status = FitStatus::kIllConditioned;
    s.message = "time does not grow with size in the window: no bandwidth term";
    return fit;
  }
  fit.alpha = Seconds(alpha);
  fit.beta = BytesPerSecond(1.0 / inv_beta);
  s.rms_rel_error = RmsRel(pts, alpha, inv_beta);
  s.status = s.rms_rel_error > options.poor_fit_rms ? FitStatus::kPoorFit : FitStatus::kConverged;
  s.message = StrCat(fit.points, " rows, rms relative error ", s.rms_rel_error, note);
  return fit;
}

AlphaBetaFit FitAlphaBeta(const NcclTestsTable& table, const AlphaBetaOptions& options) {
  std::vector<SizeTime> pts;
  for (const auto& r : table.rows)
    pts.push_back({r.size, options.in_place ? r.in_place.time : r.out_of_place.time});
  AlphaBetaFit fit = FitAlphaBeta(pts, options);
  fit.collective = table.collective;
  fit.ranks = table.ranks;
  fit.bus_beta = fit.beta * table.BusFactor();
  return fit;
}

}  // namespace parasim::calibrate
