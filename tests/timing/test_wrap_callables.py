"""CallableId names and wrap_callables / restore_original_callables for every kind of callable."""

from __future__ import annotations

import re
import sys
import types

import pytest
from straggler import CallableId
from straggler.timing.callables import CallableWrapper


class Base:
    def inherited(self, x):
        return ("inherited", x)


class Model(Base):
    def forward(self, x):
        return ("forward", self, x)

    @staticmethod
    def static(x):
        return ("static", x)

    @classmethod
    def klass(cls, x):
        return ("klass", cls, x)


def module_function(x):
    return ("module", x)


class Recorder:
    """Stands in for a section: counts entries and exits."""

    def __init__(self, name):
        self.name = name
        self.entered = 0
        self.exited = 0

    def __enter__(self):
        self.entered += 1

    def __exit__(self, *exc):
        self.exited += 1
        return False


@pytest.fixture
def wrapper():
    made = {}

    def section_for(name, profile_cuda):
        return made.setdefault(name, Recorder(name))

    w = CallableWrapper(section_for)
    w.sections = made
    yield w
    w.restore()


def test_callable_id_names_follow_nvrx():
    mod = sys.modules[__name__]
    assert str(CallableId(mod, "module_function")) == f"{__name__}.module_function"
    assert str(CallableId(Model, "static")) == f"{__name__}.Model.static"
    assert str(CallableId(Model(), "forward")) == "Model.forward"


def test_callable_id_is_frozen_with_nvrx_fields():
    cid = CallableId(Model, "forward", ignored_args=("self",))
    assert (cid.arg_filter_fn, cid.extra_args_fn, cid.ignored_args) == (None, None, ("self",))
    with pytest.raises(AttributeError):
        cid.name = "other"


def test_instance_method_is_wrapped_and_restored(wrapper):
    model = Model()
    wrapper.wrap([CallableId(model, "forward")])
    assert model.forward(1) == ("forward", model, 1)
    assert wrapper.sections["Model.forward"].entered == 1
    wrapper.restore()
    assert "forward" not in vars(model)  # the instance attribute we added is gone
    model.forward(2)
    assert wrapper.sections["Model.forward"].entered == 1


def test_static_and_class_methods_keep_their_binding(wrapper):
    wrapper.wrap([CallableId(Model, "static"), CallableId(Model, "klass")])
    assert Model.static(1) == ("static", 1)
    assert Model().static(2) == ("static", 2)  # still a staticmethod: no self passed
    assert Model.klass(3) == ("klass", Model, 3)
    assert isinstance(vars(Model)["static"], staticmethod)
    assert isinstance(vars(Model)["klass"], classmethod)
    name = f"{__name__}.Model"
    assert wrapper.sections[f"{name}.static"].entered == 2
    assert wrapper.sections[f"{name}.klass"].entered == 1
    wrapper.restore()
    assert vars(Model)["static"].__func__.__name__ == "static"
    Model.static(4)
    assert wrapper.sections[f"{name}.static"].entered == 2


def test_method_wrapped_on_the_class_applies_to_every_instance(wrapper):
    wrapper.wrap([CallableId(Model, "forward")])
    a, b = Model(), Model()
    assert a.forward(1) == ("forward", a, 1)
    b.forward(2)
    assert wrapper.sections[f"{__name__}.Model.forward"].entered == 2


def test_inherited_method_is_restored_by_deleting_our_copy(wrapper):
    wrapper.wrap([CallableId(Model, "inherited")])
    assert Model().inherited(1) == ("inherited", 1)
    wrapper.restore()
    assert "inherited" not in vars(Model)


def test_module_function_is_wrapped_and_restored(wrapper):
    mod = types.ModuleType("fake_mod")
    mod.fn = module_function
    wrapper.wrap([CallableId(mod, "fn")])
    assert mod.fn(5) == ("module", 5)
    assert mod.fn.__name__ == "module_function"  # functools.wraps
    assert wrapper.sections["fake_mod.fn"].entered == 1
    wrapper.restore()
    assert mod.fn is module_function


def test_second_call_adds_to_the_first_and_restore_puts_all_back(wrapper):
    mod = types.ModuleType("fake_mod")
    mod.fn = module_function
    model = Model()
    wrapper.wrap([CallableId(mod, "fn")])
    wrapper.wrap([CallableId(model, "forward"), CallableId(mod, "fn")])  # fn: not twice
    assert len(wrapper) == 2
    mod.fn(1)
    assert wrapper.sections["fake_mod.fn"].entered == 1
    wrapper.restore()
    assert mod.fn is module_function and "forward" not in vars(model)


def test_exceptions_pass_through_and_close_the_section(wrapper):
    class Boom:
        def run(self):
            raise KeyError("boom")

    obj = Boom()
    wrapper.wrap([CallableId(obj, "run")])
    with pytest.raises(KeyError, match="boom"):
        obj.run()
    section = wrapper.sections["Boom.run"]
    assert (section.entered, section.exited) == (1, 1)


def test_bad_callable_ids_are_rejected_before_anything_is_wrapped(wrapper):
    mod = types.ModuleType("fake_mod")
    mod.fn = module_function
    mod.value = 3
    with pytest.raises(ValueError, match="value"):
        wrapper.wrap([CallableId(mod, "fn"), CallableId(mod, "value")])
    with pytest.raises(ValueError, match="missing"):
        wrapper.wrap([CallableId(mod, "missing")])
    with pytest.raises(ValueError, match="CallableId"):
        wrapper.wrap([(mod, "fn")])
    # One CallableId, not a list of them (NVRx takes a list): named, not "not iterable".
    for not_a_list in (CallableId(mod, "fn"), None, "fake_mod.fn"):
        with pytest.raises(TypeError, match=rf"^`callable_ids={re.escape(repr(not_a_list))}` "
                                            "must be a list of CallableId objects$"):
            wrapper.wrap(not_a_list)
    wrapper.wrap((CallableId(mod, "fn"),))  # a tuple is a sequence too
    assert len(wrapper) == 1
    wrapper.restore()
    assert len(wrapper) == 0 and mod.fn is module_function
