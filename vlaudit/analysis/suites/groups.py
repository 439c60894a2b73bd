"""Registry entries of the paired-image and K-way suites: COLA, MMVP-VLM, ColorSwap, SPEC, VL-CheckList, CREPE."""

from __future__ import annotations

from vlaudit.analysis.suites.suite import Suite
from vlaudit.metrics.suites import cola as cola_metric
from vlaudit.metrics.suites import colorswap as colorswap_metric
from vlaudit.metrics.suites import crepe as crepe_metric
from vlaudit.metrics.suites import mmvp as mmvp_metric
from vlaudit.metrics.suites import spec as spec_metric
from vlaudit.metrics.suites import vl_checklist as vl_checklist_metric
from vlaudit.sources.suites import cola, colorswap, crepe, mmvp, spec, vl_checklist

COLA = Suite(
    name=cola.SUITE, title=cola.TITLE, layout=cola.LAYOUT, read=cola.read_cola,
    outcomes=cola_metric.outcomes, aggregate=cola_metric.aggregate,
    metric="multi-object accuracy: each caption scores higher on its own image than on the other (mean over items)",
    tie_rule=cola_metric.TIE_RULE, official=cola_metric.SOURCE, directions="t2i")

MMVP_VLM = Suite(
    name=mmvp.SUITE, title=mmvp.TITLE, layout=mmvp.LAYOUT, read=mmvp.read_mmvp,
    outcomes=mmvp_metric.outcomes, aggregate=mmvp_metric.aggregate,
    metric="pair accuracy: both statements pick their image (softmax over the two images); per pattern, mean "
           "over the 9 patterns",
    tie_rule=mmvp_metric.TIE_RULE, official=mmvp_metric.SOURCE, directions="t2i")

VL_CHECKLIST = Suite(
    name=vl_checklist.SUITE, title=vl_checklist.TITLE, layout=vl_checklist.LAYOUT,
    read=vl_checklist.read_vl_checklist, outcomes=vl_checklist_metric.outcomes,
    aggregate=vl_checklist_metric.aggregate,
    metric="itc accuracy: POS[0] scores above NEG[0] on the image, over the first 1,000 items of the file",
    tie_rule=vl_checklist_metric.TIE_RULE, official=vl_checklist_metric.SOURCE, directions="i2t",
    options=(("corpus", "the file's corpus YAML (corpus/v1/<Type>/<corpus>.yaml): IMG_ROOT is the image root"),))

SPEC = Suite(
    name=spec.SUITE, title=spec.TITLE, layout=spec.LAYOUT, read=spec.read_spec,
    outcomes=spec_metric.outcomes, aggregate=spec_metric.aggregate,
    metric="i2t and t2i accuracy: argmax over the K candidates equals the label; per subset, mean over subsets",
    tie_rule=spec_metric.TIE_RULE, official=spec_metric.SOURCE, directions="both")

COLORSWAP = Suite(
    name=colorswap.SUITE, title=colorswap.TITLE, layout=colorswap.LAYOUT, read=colorswap.read_colorswap,
    outcomes=colorswap_metric.outcomes, aggregate=colorswap_metric.aggregate,
    metric="text, image and group scores of each 2×2 example (Winoground-style), means over examples",
    tie_rule=colorswap_metric.TIE_RULE, official=colorswap_metric.SOURCE, directions="both")

CREPE = Suite(
    name=crepe.SUITE, title=crepe.TITLE, layout=crepe.LAYOUT, read=crepe.read_crepe,
    outcomes=crepe_metric.outcomes, aggregate=crepe_metric.aggregate,
    metric="image-to-text R@1/3/5/10 of the true caption among its hard negatives (mean over rows per file)",
    tie_rule=crepe_metric.TIE_RULE, official=crepe_metric.SOURCE, directions="i2t",
    options=(("hard_neg_key", "the negatives column (hard_negs, valid_hard_negs_atom/comp/combined); default all"),
             ("image_root", "the Visual Genome folder holding VG_100K and VG_100K_2 (looked up as the loader does)")))

ENTRIES: tuple[Suite, ...] = (COLA, MMVP_VLM, VL_CHECKLIST, SPEC, COLORSWAP, CREPE)
