"""Data: synthetic generators (the papers' recipes), built-in datasets, CSV loading, ℓ2 bounds."""

from dpviz.data.bounds import clip_to_ball, data_radius
from dpviz.data.builtin import BUILTIN, BUILTIN_TITLES, load_builtin
from dpviz.data.csv import CsvLoad, load_csv
from dpviz.data.dataset import Dataset
from dpviz.data.generators import (
    GENERATORS,
    GeneratorSpec,
    anisotropic_blobs,
    fig3_three,
    fig6_blobs,
    fig7_gmm,
    moons,
    null_uniform,
    varied_blobs,
)

__all__ = [
    "BUILTIN",
    "BUILTIN_TITLES",
    "GENERATORS",
    "CsvLoad",
    "Dataset",
    "GeneratorSpec",
    "anisotropic_blobs",
    "clip_to_ball",
    "data_radius",
    "fig3_three",
    "fig6_blobs",
    "fig7_gmm",
    "load_builtin",
    "load_csv",
    "moons",
    "null_uniform",
    "varied_blobs",
]
