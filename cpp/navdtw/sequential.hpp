// navdtw: confidence sequences for the mean of a finite population sampled without replacement.
//
// A split of N episodes is evaluated in a uniformly random order; after t episodes the set of
// candidate split means m that remain plausible is a confidence sequence: with probability at
// least 1 - alpha it holds the true split mean at every t at once, so a user may stop whenever they
// like. Values are scaled to [0, 1] by the caller (sequential.py).
//
// Method: testing by betting (Waudby-Smith & Ramdas, "Confidence sequences for sampling without
// replacement", NeurIPS 2020, and "Estimating means of bounded random variables by betting", JRSS B
// 2023). Under sampling without replacement the t-th value's conditional mean, if the split mean is
// m, is mu_t(m) = (N m - S_{t-1}) / (N - t + 1), where S_{t-1} is the sum so far; so for the true m
//   K+_t(m) = prod_{i<=t} (1 + l+_i (x_i - mu_i(m))),   K-_t(m) = prod_{i<=t} (1 - l-_i (x_i - mu_i(m)))
// are nonnegative martingales (a gambler's capital betting that the mean is above / below m) for
// any predictable bets l_i with every factor >= 0, and so is any fixed-weight average of such
// capitals ("diversified" betting, section 5 of the 2023 paper). By Ville's inequality neither
// side's average exceeds 2/alpha at any t with probability more than alpha/2.
//
// The bets: no single predictable bet suits both a large gap (stake much, early) and a small one
// (stake little, long), so each side is the average of kBets capitals with different bets, each
// truncated to l+ = min(l, c / mu), l- = min(l, c / (1 - mu)) with c = 3/4 (every factor >= 1/4):
//   weight 1/2: the predictable plug-in l_i = sqrt(2 log(2/alpha) / (var_{i-1} i log(1 + i)))
//               (with no cap of its own, so a lopsided start stakes all the truncation allows);
//   1/6 each:   the plug-in tuned to a fixed number of episodes n in {40, 160, 640},
//               l_i = sqrt(2 log(2/alpha) / (var_{i-1} n)) (constant once var settles).
// The average loses log 2 (the plug-in) or log 6 to the best component and gains its speed:
// docs/stopping.md measures it against the single plug-in capped at 3/4 used before.
//
// Each factor of K+ is nonincreasing in m and each factor of K- nondecreasing (the bets do not
// depend on m but for the truncation), so each capital, and each average, is monotone in m: the
// candidates K+ has ruled out are all those below some point and the ones K- has ruled out all
// those above some point, so the confidence sequence is an interval, and a grid of candidates
// (grid + 1 points on [0, 1]) bounds it conservatively by the last excluded grid point on each
// side. Excluded candidates stay excluded (the running intersection), which also means only the
// candidates still inside need updating: after a few hundred episodes they are a small part of
// the grid. The deterministic range [S_t / N, (S_t + N - t) / N] (the unseen values all 0 or all
// 1) is intersected in, so at t = N the interval is the exact mean. If the two sides meet
// (nothing left: the rare error event the guarantee allows), the interval is the deterministic
// range, which is certain, and emptied() says at which count it first happened. It needs the
// split mean's own capital to have crossed: a candidate ruled out as too low by its K+ rules out
// every mean below it too (K+ is nonincreasing in m), one ruled out as too high every mean above
// it, and the mean lies in the deterministic range; so under a uniformly random order it happens
// with probability at most alpha (Ville), and sequential.py reports it as a broken order. (The
// grid's candidates running out alone is not that: near the end the deterministic range can fall
// between two grid points.) Capitals are kept as plain products: a candidate still inside has
// both averages below 2/alpha, so no capital can exceed 2/alpha / (1/6).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace navdtw {

class WorConfidenceSequence {
public:
    static constexpr double kCap = 0.75;  // c: no bet risks more than 3/4 of the capital
    static constexpr int kBets = 4;       // capitals averaged per side and candidate
    // The fixed numbers of episodes the tuned bets aim at, and the weights (the plug-in's first).
    static constexpr double kTargets[kBets - 1] = {40.0, 160.0, 640.0};
    static constexpr double kWeights[kBets] = {1.0 / 2.0, 1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0};

    WorConfidenceSequence(std::int64_t population, double alpha, std::int64_t grid)
        : n_(population), grid_(grid), threshold_(2.0 / alpha), log_threshold_(std::log(2.0 / alpha)), last_(grid) {
        if (population < 1) throw std::invalid_argument("population must be >= 1");
        if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must be in (0, 1)");
        if (grid < 2 || grid > (std::int64_t(1) << 24))  // 8 capitals of 8 bytes per candidate: at most 1 GiB
            throw std::invalid_argument("grid must be in [2, 2**24]");
        up_.assign(static_cast<std::size_t>((grid + 1) * kBets), 1.0);
        down_.assign(static_cast<std::size_t>((grid + 1) * kBets), 1.0);
    }

    // Takes the next value of the order, in [0, 1].
    void update(double x) {
        if (!(x >= 0 && x <= 1)) throw std::invalid_argument("value outside [0, 1]: " + std::to_string(x));
        if (t_ >= n_) throw std::invalid_argument("more values than the population holds");
        const double tt = static_cast<double>(t_ + 1);
        const double variance = var_sum_ / tt;  // var_{t-1}: (1/4 + sum of squared deviations) / t
        double bets[kBets];
        bets[0] = std::sqrt(2.0 * log_threshold_ / (variance * tt * std::log1p(tt)));
        for (int k = 1; k < kBets; ++k) bets[k] = std::sqrt(2.0 * log_threshold_ / (variance * kTargets[k - 1]));
        const double remaining = static_cast<double>(n_ - t_);
        const double nn = static_cast<double>(n_), gg = static_cast<double>(grid_);
        for (std::int64_t j = first_; j <= last_; ++j) {
            const double mu = std::clamp((nn * (static_cast<double>(j) / gg) - sum_) / remaining, 0.0, 1.0);
            const double up_cap = mu > 0 ? kCap / mu : HUGE_VAL;
            const double down_cap = mu < 1 ? kCap / (1.0 - mu) : HUGE_VAL;
            double* up = &up_[static_cast<std::size_t>(j * kBets)];
            double* down = &down_[static_cast<std::size_t>(j * kBets)];
            for (int k = 0; k < kBets; ++k) {
                up[k] *= 1.0 + std::min(bets[k], up_cap) * (x - mu);
                down[k] *= 1.0 - std::min(bets[k], down_cap) * (x - mu);
            }
        }
        sum_ += x;
        ++t_;
        const double mean_hat = (0.5 + sum_) / static_cast<double>(t_ + 1);
        var_sum_ += (x - mean_hat) * (x - mean_hat);
        const double lo = exact_lower(), hi = exact_upper();
        while (first_ <= last_ && (mixture(up_, first_) >= threshold_ || point(first_) < lo)) ++first_;
        while (last_ >= first_ && (mixture(down_, last_) >= threshold_ || point(last_) > hi)) --last_;
        if (emptied_ == 0) {
            const double grid_lower = first_ > 0 ? point(first_ - 1) : 0.0;
            if (std::max(grid_lower, lo) > upper_unchecked()) emptied_ = t_;
        }
    }

    std::int64_t count() const { return t_; }
    std::int64_t population() const { return n_; }
    double sum() const { return sum_; }
    // The count at which no mean was left: the grid's interval and the deterministic range were
    // disjoint (0: never).
    std::int64_t emptied() const { return emptied_; }

    // The confidence sequence's interval now (the running intersection); [0, 1] before any value.
    double lower() const {
        const double grid_lower = first_ > 0 ? point(first_ - 1) : 0.0;
        const double b = std::max(grid_lower, exact_lower());
        return b <= upper_unchecked() ? b : exact_lower();
    }
    double upper() const {
        const double b = upper_unchecked();
        const double grid_lower = first_ > 0 ? point(first_ - 1) : 0.0;
        return std::max(grid_lower, exact_lower()) <= b ? b : exact_upper();
    }

private:
    static double mixture(const std::vector<double>& capital, std::int64_t j) {
        double s = 0.0;
        for (int k = 0; k < kBets; ++k) s += kWeights[k] * capital[static_cast<std::size_t>(j * kBets + k)];
        return s;
    }
    double point(std::int64_t j) const { return static_cast<double>(j) / static_cast<double>(grid_); }
    double exact_lower() const { return sum_ / static_cast<double>(n_); }
    double exact_upper() const { return (sum_ + static_cast<double>(n_ - t_)) / static_cast<double>(n_); }
    double upper_unchecked() const {
        const double grid_upper = last_ < grid_ ? point(last_ + 1) : 1.0;
        return std::min(grid_upper, exact_upper());
    }

    std::int64_t n_, grid_;
    double threshold_, log_threshold_;
    std::int64_t t_ = 0;
    double sum_ = 0.0;
    double var_sum_ = 0.25;          // 1/4 + sum_i (x_i - mean_hat_i)^2, mean_hat_i = (1/2 + S_i) / (i + 1)
    std::int64_t first_ = 0, last_;  // the grid points not yet excluded: [first_, last_]
    std::int64_t emptied_ = 0;       // the count at which no mean was left (0: never)
    std::vector<double> up_, down_;  // K+ and K- per grid point and bet: [j * kBets + k]
};

// The interval after each of the n values x[0..n), written to lower[i], upper[i]; returns the
// count at which no mean was left (0: never).
inline std::int64_t wor_confidence_path(const double* x, std::int64_t n, std::int64_t population, double alpha,
                                        std::int64_t grid, double* lower, double* upper) {
    WorConfidenceSequence cs(population, alpha, grid);
    for (std::int64_t i = 0; i < n; ++i) {
        cs.update(x[i]);
        lower[i] = cs.lower();
        upper[i] = cs.upper();
    }
    return cs.emptied();
}

}  // namespace navdtw
