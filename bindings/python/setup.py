"""The wheel's platform tag; everything else is in pyproject.toml.

The package has no CPython extension, but its wheel carries a shared library
(libshmloader.so, loaded with ctypes) and the Go ``shmloader`` binary, both built for one
platform. So the wheel installs into platlib and is tagged py3-none-<platform> (for
example py3-none-linux_x86_64): any CPython 3, any ABI, that platform only; never
py3-none-any.
"""

from setuptools import Distribution, setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1, as in the bench's venv (petastorm needs < 70)
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef,unused-ignore]


class PlatformDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True  # platform-specific content: platlib, and a non-pure wheel


class PlatformWheel(bdist_wheel):
    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=PlatformDistribution, cmdclass={"bdist_wheel": PlatformWheel})
