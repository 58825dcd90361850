// Overloaded: one lambda per alternative of a std::variant, for std::visit. A visit over
// OpParams (kc/case.h) or OpGeometry lists every op and has no catch-all overload, so
// that adding an op stops the build at each site that must handle it.
#pragma once

namespace kc {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace kc
